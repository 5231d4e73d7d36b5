package game

import (
	"testing"
	"unsafe"
)

// TestSnakeLayout holds the snake record to the layout its doc comment
// gives: 256 bytes, a movement phase's fields in the first cache line, the
// body and what think reads of every snake in the second.
func TestSnakeLayout(t *testing.T) {
	var s snake
	if n := unsafe.Sizeof(s); n != 256 {
		t.Errorf("a snake is %d bytes, want 256", n)
	}
	fields := []struct {
		name      string
		off, size uintptr
		line      uintptr
	}{
		{"moved", unsafe.Offsetof(s.moved), unsafe.Sizeof(s.moved), 0},
		{"wait", unsafe.Offsetof(s.wait), unsafe.Sizeof(s.wait), 0},
		{"die", unsafe.Offsetof(s.die), unsafe.Sizeof(s.die), 0},
		{"tailLeaves", unsafe.Offsetof(s.tailLeaves), unsafe.Sizeof(s.tailLeaves), 0},
		{"headOn", unsafe.Offsetof(s.headOn), unsafe.Sizeof(s.headOn), 0},
		{"clearNext", unsafe.Offsetof(s.clearNext), unsafe.Sizeof(s.clearNext), 0},
		{"blocked", unsafe.Offsetof(s.blocked), unsafe.Sizeof(s.blocked), 0},
		{"shared", unsafe.Offsetof(s.shared), unsafe.Sizeof(s.shared), 0},
		{"steps", unsafe.Offsetof(s.steps), unsafe.Sizeof(s.steps), 0},
		{"next", unsafe.Offsetof(s.next), unsafe.Sizeof(s.next), 0},
		{"nextPx", unsafe.Offsetof(s.nextPx), unsafe.Sizeof(s.nextPx), 0},
		{"nextX", unsafe.Offsetof(s.nextX), unsafe.Sizeof(s.nextX), 0},
		{"nextY", unsafe.Offsetof(s.nextY), unsafe.Sizeof(s.nextY), 0},
		{"tailPixel", unsafe.Offsetof(s.tailPixel), unsafe.Sizeof(s.tailPixel), 0},
		{"killer", unsafe.Offsetof(s.killer), unsafe.Sizeof(s.killer), 0},
		{"head", unsafe.Offsetof(s.head), unsafe.Sizeof(s.head), 0},
		{"headX", unsafe.Offsetof(s.headX), unsafe.Sizeof(s.headX), 0},
		{"headY", unsafe.Offsetof(s.headY), unsafe.Sizeof(s.headY), 0},
		{"protectedUntil", unsafe.Offsetof(s.protectedUntil), unsafe.Sizeof(s.protectedUntil), 0},
		{"moveStep", unsafe.Offsetof(s.moveStep), unsafe.Sizeof(s.moveStep), 0},
		{"alive", unsafe.Offsetof(s.alive), unsafe.Sizeof(s.alive), 0},
		{"colour", unsafe.Offsetof(s.colour), unsafe.Sizeof(s.colour), 0},
		{"dir", unsafe.Offsetof(s.dir), unsafe.Sizeof(s.dir), 0},
		{"moveDir", unsafe.Offsetof(s.moveDir), unsafe.Sizeof(s.moveDir), 0},
		{"body", unsafe.Offsetof(s.body), unsafe.Sizeof(s.body), 1},
		{"tail", unsafe.Offsetof(s.tail), unsafe.Sizeof(s.tail), 1},
		{"length", unsafe.Offsetof(s.length), unsafe.Sizeof(s.length), 1},
		{"grow", unsafe.Offsetof(s.grow), unsafe.Sizeof(s.grow), 1},
		{"best", unsafe.Offsetof(s.best), unsafe.Sizeof(s.best), 1},
		{"bot", unsafe.Offsetof(s.bot), unsafe.Sizeof(s.bot), 1},
		{"used", unsafe.Offsetof(s.used), unsafe.Sizeof(s.used), 1},
		{"wantDash", unsafe.Offsetof(s.wantDash), unsafe.Sizeof(s.wantDash), 1},
	}
	for _, f := range fields {
		if f.off/64 != f.line || (f.off+f.size-1)/64 != f.line {
			t.Errorf("snake.%s is at bytes %d..%d, want it within line %d (bytes %d..%d)",
				f.name, f.off, f.off+f.size-1, f.line, f.line*64, f.line*64+63)
		}
	}
}
