package board

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"snaked/game"
	"snaked/internal/scores"
)

func view(m tea.Model) string { return ansi.Strip(m.View()) }

func key(m tea.Model, k tea.KeyMsg) (tea.Model, tea.Msg) {
	m, cmd := m.Update(k)
	if cmd == nil {
		return m, nil
	}
	return m, cmd()
}

// TestTabs: the three tabs in turn (Tab forwards, left back), rows in
// rank order, the viewer's record, "Nobody yet" for an empty board, and q,
// Esc and Ctrl-C leaving.
func TestTabs(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	d := Data{
		Top:   []scores.Entry{{Rank: 1, Name: "ann", Best: 50, ID: scores.KeyID("SHA256:x")}, {Rank: 2, Name: "ben", Best: 40, ID: scores.NameID("ben")}},
		Today: nil,
		You:   &scores.Record{Name: "ann", Rank: 1, Best: 50, Kills: 7, Deaths: 3, Games: 4, Played: 90 * time.Second, First: time.Unix(0, 0), Last: time.Unix(86400, 0)},
	}
	var m tea.Model = New(d, 80, 24, r)
	v := view(m)
	if a, b := strings.Index(v, "ann"), strings.Index(v, "ben"); !strings.Contains(v, "[All-time]") || a < 0 || b < 0 || a > b || strings.Contains(v, "SHA256") {
		t.Fatalf("all-time tab:\n%s", v)
	}
	m, _ = key(m, tea.KeyMsg{Type: tea.KeyTab})
	if v := view(m); !strings.Contains(v, "[Today]") || !strings.Contains(v, "Nobody yet") {
		t.Fatalf("today tab:\n%s", v)
	}
	m, _ = key(m, tea.KeyMsg{Type: tea.KeyTab})
	if v := view(m); !strings.Contains(v, "[You]") || !strings.Contains(v, "kills        7") || !strings.Contains(v, "time played  1m30s") {
		t.Fatalf("you tab:\n%s", v)
	}
	m, _ = key(m, tea.KeyMsg{Type: tea.KeyLeft})
	if v := view(m); !strings.Contains(v, "[Today]") {
		t.Fatalf("left from You:\n%s", v)
	}
	for _, k := range []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune{'q'}}, {Type: tea.KeyEsc}, {Type: tea.KeyCtrlC}} {
		m2, msg := key(New(d, 80, 24, r), k)
		if _, ok := msg.(tea.QuitMsg); !ok || !m2.(Model).Left() || m2.View() != "" {
			t.Errorf("%v did not leave", k)
		}
	}
	if v := view(New(Data{Keyless: true}, 80, 24, r).tabTo(tabYou)); !strings.Contains(v, "without a key") {
		t.Errorf("keyless viewer's own tab:\n%s", v)
	}
	if v := view(New(Data{Err: "Scores are off on this server."}, 80, 24, r)); !strings.Contains(v, "off") {
		t.Errorf("no data:\n%s", v)
	}
}

// tabTo is m on tab i (tests).
func (m Model) tabTo(i int) Model {
	m.tab = i
	return m
}

// TestHostileNames: names from the database that are no nicknames (escape
// sequences, a CSI as U+009B, DEL, a newline, 200 bytes, broken UTF-8)
// show as the same board of clean names does, each byte outside the
// nickname alphabet as '?' and cut to game.MaxName: the only escapes in
// the views are lipgloss's own styling.
func TestHostileNames(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	long := strings.Repeat("L", 200)
	names := []struct{ hostile, clean string }{
		{"\x1b[2J\x1b[H", "??2J??H"},
		{"\u009b31m", "??31m"},
		{"x\x7fy", "x?y"},
		{"two\r\nlines", "two??lines"},
		{long, long[:game.MaxName]},
		{"\xff\xfe\xc0", "???"},
		{"\x1b]0;title\x07", "??0?title?"},
		{"ann", "ann"},
	}
	data := func(hostile bool) Data {
		var d Data
		for i, n := range names {
			name := n.clean
			if hostile {
				name = n.hostile
			}
			e := scores.Entry{Rank: i + 1, Best: 100 - i, Name: name, ID: scores.NameID(name)}
			d.Top = append(d.Top, e)
			d.Today = append([]scores.Entry{e}, d.Today...)
		}
		d.You = &scores.Record{Name: d.Top[0].Name, Rank: 1, Best: 100, First: time.Unix(0, 0), Last: time.Unix(0, 0)}
		return d
	}
	hm, cm := New(data(true), 100, 30, r), New(data(false), 100, 30, r)
	for tab := 0; tab < ntabs; tab++ {
		hv, cv := hm.tabTo(tab).View(), cm.tabTo(tab).View()
		if !strings.Contains(hv, "\x1b[") {
			t.Fatalf("tab %d: no styling at all; the comparison shows nothing:\n%q", tab, hv)
		}
		if hv != cv {
			t.Errorf("tab %d, hostile names:\n%q\nclean names:\n%q", tab, hv, cv)
		}
		s := strings.ReplaceAll(ansi.Strip(hv), "·", "")
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 && c != '\n' || c >= 0x7f {
				t.Errorf("tab %d: byte %#x at %d of the text:\n%s", tab, c, i, s)
				break
			}
		}
	}
	if v := view(cm); !strings.Contains(v, "??2J??H") || !strings.Contains(v, long[:game.MaxName]) {
		t.Errorf("all-time tab misses the clean names:\n%s", v)
	}
	if v := view(cm.tabTo(tabYou)); !strings.Contains(v, "name         ??2J??H\n") {
		t.Errorf("you tab misses the clean name:\n%s", v)
	}
}
