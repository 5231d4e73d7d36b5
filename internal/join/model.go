package join

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"snaked/game"
)

// Submit tries to join as name. It returns "" when the player is in the
// world (the join screen is done) or why the name was refused, which the
// screen shows.
type Submit func(name string) (why string)

// Model is the join screen as a bubbletea model: a one-line name editor in
// a centred box. The session runs it in a tea.Program fed with the keys it
// decodes itself (see Key), never with the raw channel, so no keystroke is
// lost when the program ends.
type Model struct {
	in      textinput.Model
	submit  Submit
	why     string
	down    int // shutdown countdown in seconds; < 0 none
	w, h    int
	ascii   bool
	style   lipgloss.Style
	joined  bool // submit let the player in
	left    bool // the player left (Esc, Ctrl-C, Ctrl-D)
	guestID func() string
}

// NewModel returns the join screen for a terminal of cols x rows that
// calls submit on Enter. ascii draws the box in ASCII; r styles the text
// for the session's terminal (the input's cursor is a reverse-video cell);
// guest names an empty submission. The cursor does not blink: a blinking
// cursor is a timer per session, and a timer's goroutine would outlive the
// program.
func NewModel(cols, rows int, ascii bool, r *lipgloss.Renderer, submit Submit, guest func() string) Model {
	in := textinput.New()
	in.Prompt = prompt
	in.CharLimit = MaxName
	in.Width = MaxName + 1
	in.PromptStyle, in.TextStyle, in.PlaceholderStyle = r.NewStyle(), r.NewStyle(), r.NewStyle()
	in.Cursor.Style, in.Cursor.TextStyle = r.NewStyle(), r.NewStyle() // the cursor adds reverse video
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Focus()
	border := lipgloss.NormalBorder()
	if ascii {
		border = lipgloss.Border{Top: "-", Bottom: "-", Left: "|", Right: "|",
			TopLeft: "+", TopRight: "+", BottomLeft: "+", BottomRight: "+"}
	}
	return Model{
		in: in, submit: submit, down: -1, w: cols, h: rows, ascii: ascii,
		style:   r.NewStyle().Border(border).Padding(0, 1),
		guestID: guest,
	}
}

// Refused returns the model showing why the name the player came with
// was refused.
func (m Model) Refused(why string) Model {
	m.why = why
	return m
}

// Enter is the message the session sends for the Enter key: the model
// submits the name and answers on Reply ("" when the player joined, else
// why not) before it takes another message, so the session knows where
// the next key goes (the game's, if "") and no keystroke is lost. Reply
// must have room for one answer.
type Enter struct{ Reply chan<- string }

// Shutdown is the message that shows the shutdown countdown (seconds).
type Shutdown int

// Redraw is the message that repaints the whole screen (Ctrl-L).
type Redraw struct{}

// Init does nothing: the model waits for keys.
func (m Model) Init() tea.Cmd { return nil }

// Update handles keys, the window's size, the countdown and Redraw.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return m, nil
	case Shutdown:
		m.down = int(msg)
		return m, nil
	case Redraw:
		return m, tea.ClearScreen
	case Enter:
		return m.enter(msg.Reply)
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyEsc, tea.KeyCtrlC, tea.KeyCtrlD:
			m.left = true
			return m, tea.Quit
		case tea.KeyEnter:
			return m.enter(nil)
		case tea.KeyRunes:
			keep := msg.Runes[:0:0]
			for _, r := range msg.Runes {
				if r < 0x80 && game.NameByte(byte(r)) {
					keep = append(keep, r)
				}
			}
			if len(keep) == 0 {
				return m, nil
			}
			msg.Runes = keep
		}
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(msg)
	return m, cmd
}

// enter submits the name typed (empty: a guest name) and answers on
// reply when it is not nil.
func (m Model) enter(reply chan<- string) (tea.Model, tea.Cmd) {
	if m.joined || m.left {
		if reply != nil {
			if m.left {
				reply <- "left"
			} else {
				reply <- ""
			}
		}
		return m, nil
	}
	name := m.in.Value()
	if name == "" && m.guestID != nil {
		name = m.guestID()
	}
	why := m.submit(name)
	if reply != nil {
		reply <- why
	}
	if why != "" {
		m.why = why
		return m, nil
	}
	m.joined = true
	return m, tea.Quit
}

// Joined reports whether the player got into the world.
func (m Model) Joined() bool { return m.joined }

// Left reports whether the player chose to leave.
func (m Model) Left() bool { return m.left }

// View draws the box centred on the terminal, or its lines unboxed when
// the terminal is too small for it.
func (m Model) View() string {
	if m.joined || m.left {
		return ""
	}
	lines := []string{
		"multiplayer snake over SSH",
		"",
		m.in.View(),
		"",
		"Letters, digits, _ and -, at most " + strconv.Itoa(MaxName) + ".",
		"Enter joins; empty picks a guest name.",
		"Esc or Ctrl-C leaves.",
		"",
		m.why,
	}
	if m.down >= 0 {
		lines = append(lines, "", "SHUTTING DOWN IN "+strconv.Itoa(m.down))
	}
	body := strings.Join(lines, "\n")
	width := len(prompt) + MaxName + 1
	for _, l := range lines[4:] {
		width = max(width, len(l))
	}
	box := m.style.Width(width + 2).Render(body)
	if lipgloss.Width(box) > m.w || lipgloss.Height(box) > m.h {
		// Too small for the box: the lines that matter most first, as
		// many as fit.
		lines = []string{m.in.View(), m.why}
		if m.down >= 0 {
			lines = append(lines, "SHUTTING DOWN IN "+strconv.Itoa(m.down))
		}
		lines = append(lines, "Esc or Ctrl-C leaves.", "Enter joins; empty picks a guest name.",
			"Letters, digits, _ and -, at most "+strconv.Itoa(MaxName)+".")
		if m.why == "" {
			lines = append(lines[:1], lines[2:]...)
		}
		lines = lines[:min(len(lines), max(m.h, 1))]
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, max(m.w, 1), "")
		}
		return strings.Join(lines, "\n")
	}
	return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, box)
}
