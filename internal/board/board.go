// Package board owns the scores browser: the screen "ssh scores@host"
// shows, a bubbletea model with three tabs (all-time, today, your record)
// over a scrolling table. It knows nothing of SSH or the database: the
// session gives it the rows, runs it in a tea.Program and feeds it keys.
package board

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"snaked/game"
	"snaked/internal/scores"
)

// Data is what the browser shows, read once when it opens. Names are shown
// as game.CleanName makes them: a name from the database is not trusted to
// be a nickname.
type Data struct {
	Top, Today []scores.Entry
	You        *scores.Record // nil: no record (keyless, or never played)
	Keyless    bool           // the viewer has no key
	Err        string         // why the data is missing, if it is
}

// Tabs.
const (
	tabTop = iota
	tabToday
	tabYou
	ntabs
)

var tabNames = [ntabs]string{"All-time", "Today", "You"}

// Model is the scores browser.
type Model struct {
	d      Data
	tab    int
	tables [2]table.Model
	w, h   int
	r      *lipgloss.Renderer
	bold   lipgloss.Style
	left   bool
}

// New returns the browser for a cols x rows terminal; r styles its text
// for the viewer's terminal.
func New(d Data, cols, rows int, r *lipgloss.Renderer) Model {
	m := Model{d: d, w: cols, h: rows, r: r, bold: r.NewStyle().Bold(true)}
	st := table.Styles{
		Header:   r.NewStyle().Bold(true).Padding(0, 1),
		Cell:     r.NewStyle().Padding(0, 1),
		Selected: r.NewStyle().Reverse(true),
	}
	cols4 := []table.Column{{Title: "rank", Width: 5}, {Title: "best", Width: 5}, {Title: "name", Width: 16}, {Title: "identity", Width: 8}}
	for i, es := range [2][]scores.Entry{d.Top, d.Today} {
		rows := make([]table.Row, 0, len(es))
		for _, e := range es {
			rows = append(rows, table.Row{strconv.Itoa(e.Rank), strconv.Itoa(e.Best), game.CleanName(e.Name), e.ID.Kind.String()})
		}
		m.tables[i] = table.New(table.WithColumns(cols4), table.WithRows(rows), table.WithFocused(true),
			table.WithStyles(st), table.WithHeight(m.tableHeight()))
	}
	return m
}

// tableHeight is the table's rows for the terminal: all but the title,
// the tabs, the help line and their gaps.
func (m Model) tableHeight() int { return max(m.h-5, 3) }

// Init does nothing: the browser waits for keys.
func (m Model) Init() tea.Cmd { return nil }

// Left reports whether the viewer left.
func (m Model) Left() bool { return m.left }

// Update handles keys (Tab, arrows, PgUp/PgDn, q, Esc, Ctrl-C) and the
// window's size.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		for i := range m.tables {
			m.tables[i].SetHeight(m.tableHeight())
		}
		return m, nil
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "esc", "ctrl+c", "ctrl+d":
			m.left = true
			return m, tea.Quit
		case "tab", "right", "l":
			m.tab = (m.tab + 1) % ntabs
			return m, nil
		case "shift+tab", "left", "h":
			m.tab = (m.tab + ntabs - 1) % ntabs
			return m, nil
		}
	}
	if m.tab < len(m.tables) {
		var cmd tea.Cmd
		m.tables[m.tab], cmd = m.tables[m.tab].Update(msg)
		return m, cmd
	}
	return m, nil
}

// View draws the title, the tabs and the current tab.
func (m Model) View() string {
	if m.left {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.bold.Render("snaked scores"))
	b.WriteString("\n")
	for i, n := range tabNames {
		if i == m.tab {
			b.WriteString(m.bold.Render("[" + n + "]"))
		} else {
			b.WriteString(" " + n + " ")
		}
		b.WriteString(" ")
	}
	b.WriteString("\n\n")
	switch {
	case m.d.Err != "":
		b.WriteString(m.d.Err + "\n")
	case m.tab < len(m.tables) && len(m.tables[m.tab].Rows()) == 0:
		b.WriteString("Nobody yet.\n")
	case m.tab < len(m.tables):
		b.WriteString(m.tables[m.tab].View() + "\n")
	default:
		b.WriteString(m.you())
	}
	b.WriteString("\nTab, left/right: switch · up/down, f/b: scroll · q: leave")
	return b.String()
}

// you is the viewer's own record.
func (m Model) you() string {
	r := m.d.You
	switch {
	case r == nil && m.d.Keyless:
		return "You came without a key, so there is no record to show here.\nPlay with an SSH key and your games are kept under it.\n"
	case r == nil:
		return "No games recorded for your key yet.\n"
	}
	lines := []string{
		"name         " + game.CleanName(r.Name),
		"rank         #" + strconv.Itoa(r.Rank) + " all-time",
		"best length  " + strconv.Itoa(r.Best),
		"kills        " + strconv.Itoa(r.Kills),
		"deaths       " + strconv.Itoa(r.Deaths),
		"games        " + strconv.Itoa(r.Games),
		"time played  " + r.Played.Round(time.Second).String(),
		"first seen   " + r.First.UTC().Format("2006-01-02"),
		"last seen    " + r.Last.UTC().Format("2006-01-02"),
	}
	return strings.Join(lines, "\n") + "\n"
}
