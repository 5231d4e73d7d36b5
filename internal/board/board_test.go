package board

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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
	if !strings.Contains(v, "[All-time]") || strings.Index(v, "ann") > strings.Index(v, "ben") || strings.Contains(v, "SHA256") {
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
