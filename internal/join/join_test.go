package join

import (
	"flag"
	"io"
	"snaked/internal/testkit"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"alice":                               "alice",
		"Bob_the-Builder99":                   "Bob_the-Builder9",
		"\x1b[31mred\x1b[0m":                  "31mred0m",
		"é\u202etxt\x00":                      "txt",
		"   ":                                 "",
		"a.b@c":                               "abc",
		string(make([]byte, 100000)) + "late": "",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in[:min(len(in), 40)], got, want)
		}
	}
	for _, n := range []string{"root", "ROOT", "admin", "ubuntu", "user", "pi", ""} {
		if Usable(n) {
			t.Errorf("%q should not be usable", n)
		}
	}
	if !Usable("alice") {
		t.Error("alice should be usable")
	}
}

// tester is a model under test and what it submitted.
type tester struct {
	m     tea.Model
	tried []string
	why   string // what submit answers
}

func newTester(cols, rows int, ascii bool) *tester {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI)
	tr := &tester{}
	tr.m = NewModel(cols, rows, ascii, r, func(name string) string {
		tr.tried = append(tr.tried, name)
		return tr.why
	}, func() string { return "guest1234" })
	return tr
}

// send feeds msg and returns the command's message, if any.
func (tr *tester) send(msg tea.Msg) tea.Msg {
	var cmd tea.Cmd
	tr.m, cmd = tr.m.Update(msg)
	if cmd == nil {
		return nil
	}
	return cmd()
}

func (tr *tester) typ(s string) {
	for _, r := range s {
		tr.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// text is the model's view without escape sequences, lines trimmed.
func (tr *tester) text() string {
	var b strings.Builder
	for _, l := range strings.Split(ansi.Strip(tr.m.View()), "\n") {
		b.WriteString(strings.TrimRight(l, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestScreens draws the join screen at several sizes, in Unicode and in
// ASCII, after typing, a refused try and with the shutdown countdown.
func TestScreens(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		ascii      bool
	}{
		{"utf8-80x24", 80, 24, false},
		{"ascii-80x24", 80, 24, true},
		{"utf8-42x13", 42, 13, false}, // the box just fits
		{"utf8-41x13", 41, 13, false}, // one column short: unboxed
		{"ascii-20x5", 20, 5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTester(c.cols, c.rows, c.ascii)
			tr.typ("bob")
			tr.why = `"bob" is taken: pick another`
			tr.send(tea.KeyMsg{Type: tea.KeyEnter})
			tr.send(Shutdown(7))
			got := tr.text()
			testkit.Golden(t, "Model-"+c.name, got, *update)
			if !strings.Contains(got, prompt+"bob") || !strings.Contains(got, "is taken") || !strings.Contains(got, "SHUTTING DOWN IN 7") {
				t.Errorf("the screen misses the input, the reason or the countdown:\n%s", got)
			}
			if c.ascii {
				for _, r := range got {
					if r > 0x7e && r != '\n' {
						t.Fatalf("non-ASCII %q on the ASCII screen", r)
					}
				}
			}
		})
	}
}

// TestModelKeys: what the join screen does with each key.
func TestModelKeys(t *testing.T) {
	tr := newTester(80, 24, false)
	tr.typ("bo!é b") // '!', 'é' and ' ' are not name bytes
	tr.send(tea.KeyMsg{Type: tea.KeyBackspace})
	tr.typ("b")
	if got := tr.m.(Model).in.Value(); got != "bob" {
		t.Fatalf("input %q, want bob", got)
	}
	tr.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tr.typ(strings.Repeat("x", 30))
	if got := tr.m.(Model).in.Value(); got != strings.Repeat("x", MaxName) {
		t.Fatalf("input %q, want %d x", got, MaxName)
	}
	tr.send(tea.KeyMsg{Type: tea.KeyCtrlU})

	// A refused name: the reason shows, the program goes on.
	tr.typ("bob")
	tr.why = "taken"
	if msg := tr.send(tea.KeyMsg{Type: tea.KeyEnter}); msg != nil {
		t.Fatalf("a refused Enter returned %T", msg)
	}
	if !strings.Contains(tr.text(), "taken") || tr.m.(Model).Joined() {
		t.Fatal("refusal not shown")
	}
	// Enter from the session: the answer comes on Reply before the model
	// takes another message; an empty name is a guest's.
	tr.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tr.why = ""
	reply := make(chan string, 1)
	msg := tr.send(Enter{Reply: reply})
	if _, ok := msg.(tea.QuitMsg); !ok {
		t.Fatalf("accepted Enter returned %T, want tea.QuitMsg", msg)
	}
	if why := <-reply; why != "" {
		t.Fatalf("reply %q, want \"\"", why)
	}
	if want := []string{"bob", "guest1234"}; strings.Join(tr.tried, ",") != strings.Join(want, ",") {
		t.Fatalf("submitted %q, want %q", tr.tried, want)
	}
	if !tr.m.(Model).Joined() || tr.m.View() != "" {
		t.Fatal("joined model still shows the screen")
	}

	// Esc, Ctrl-C and Ctrl-D leave.
	for _, k := range []tea.KeyType{tea.KeyEsc, tea.KeyCtrlC, tea.KeyCtrlD} {
		tr := newTester(80, 24, false)
		if _, ok := tr.send(tea.KeyMsg{Type: k}).(tea.QuitMsg); !ok || !tr.m.(Model).Left() {
			t.Errorf("%v did not leave", k)
		}
		reply := make(chan string, 1)
		tr.send(Enter{Reply: reply})
		if why := <-reply; why == "" {
			t.Errorf("Enter after %v answered \"\": joined", k)
		}
	}
}

// TestProgram runs the model in a real tea.Program the way the session
// does (no input of its own, no signal handler, keys sent in) and checks
// that the bytes it writes show the screen and that Run returns on Enter.
func TestProgram(t *testing.T) {
	var out testkit.SyncBuf
	r := lipgloss.NewRenderer(io.Discard)
	joined := make(chan string, 1)
	m := NewModel(80, 24, false, r, func(name string) string { joined <- name; return "" }, nil)
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(&out), tea.WithoutSignalHandler(),
		tea.WithAltScreen(), tea.WithoutBracketedPaste())
	done := make(chan tea.Model, 1)
	go func() {
		fm, err := p.Run()
		if err != nil {
			t.Error(err)
		}
		done <- fm
	}()
	for _, c := range "eve" {
		p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{c}})
	}
	// The renderer draws on its own clock: wait (at most 2 s) for the name.
	for end := time.Now().Add(2 * time.Second); !strings.Contains(out.String(), "Pick a nickname: eve"); {
		if time.Now().After(end) {
			t.Fatalf("the program never drew the name typed: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	reply := make(chan string, 1)
	p.Send(Enter{Reply: reply})
	if why := <-reply; why != "" {
		t.Fatalf("reply %q", why)
	}
	fm := <-done
	if name := <-joined; name != "eve" || !fm.(Model).Joined() {
		t.Fatalf("joined as %q (%v)", name, fm.(Model).Joined())
	}
	s := out.String()
	for _, want := range []string{"\x1b[?1049h", "Pick a nickname", "\x1b[?1049l"} {
		if !strings.Contains(s, want) {
			t.Errorf("program output lacks %q", want)
		}
	}
}
