package sshserver

import (
	"sync"
	"time"
)

// key is one decoded keystroke.
type key uint8

// Keys the game understands. keyNone means "ignored".
const (
	keyNone key = iota
	keyUp
	keyDown
	keyLeft
	keyRight
	keyRune // a printable ASCII byte, in decoder.r
	keyEnter
	keyBackspace
	keyTab
	keyBackTab
	keyCtrlC
	keyCtrlD
	keyCtrlL
	keyCtrlU
	keyEsc
)

// decoder turns the bytes a terminal sends into keys. Escape sequences may
// be split across reads: the decoder keeps its state between calls. Unknown
// or overlong sequences are dropped. An ESC that ends a read stays pending:
// whoever feeds the decoder calls expire when nothing followed it in time
// (escWait), and the lone ESC becomes the Esc key.
type decoder struct {
	state decoderState
	n     int // parameter bytes of the current CSI sequence
}

// decoderState is where the decoder is in the bytes of one key.
type decoderState uint8

const (
	stateGround decoderState = iota // between keys
	stateEsc                        // after ESC: a sequence, an Alt+key, or the Esc key
	stateCSI                        // in a CSI sequence (ESC [): parameter bytes, then its final byte
	stateSS3                        // after ESC O: the final byte
)

// Bytes the decoder knows. A CSI sequence is ESC [, any number of
// parameter and intermediate bytes (csiParamLo..csiParamHi), then one
// final byte (csiFinalLo..csiFinalHi).
const (
	byteEsc    = 0x1b
	byteDel    = 0x7f       // Backspace on most terminals
	byteBS     = 0x08       // Backspace on some (Ctrl-H)
	ctrlC      = 'C' & 0x1f // Ctrl+letter sends the letter's low five bits
	ctrlD      = 'D' & 0x1f
	ctrlL      = 'L' & 0x1f
	ctrlU      = 'U' & 0x1f
	csiParamLo = 0x20
	csiParamHi = 0x3f
	csiFinalLo = 0x40
	csiFinalHi = 0x7e
)

// maxCSI bounds the parameter bytes of one CSI sequence.
const maxCSI = 32

// feed decodes p, calling emit for each key (r is the byte for keyRune).
func (d *decoder) feed(p []byte, emit func(k key, r byte)) {
	for _, c := range p {
		switch d.state {
		case stateEsc:
			switch c {
			case '[':
				d.state, d.n = stateCSI, 0
			case 'O':
				d.state = stateSS3
			case byteEsc:
				emit(keyEsc, 0) // ESC ESC: the first was a lone Esc
			default:
				// Alt+key: report the key itself.
				d.state = stateGround
				d.ground(c, emit)
			}
		case stateCSI:
			switch {
			case c >= csiFinalLo && c <= csiFinalHi:
				d.state = stateGround
				if d.n <= maxCSI {
					d.csi(c, emit)
				}
			case c >= csiParamLo && c <= csiParamHi:
				d.n++
			case c == byteEsc:
				d.state = stateEsc
			default:
				d.state = stateGround // malformed: drop it
			}
		case stateSS3:
			d.state = stateGround
			d.csi(c, emit)
		default:
			d.ground(c, emit)
		}
	}
}

// pending reports whether the decoder holds the start of a sequence: a
// lone ESC, or a CSI or SS3 sequence not finished yet.
func (d *decoder) pending() bool { return d.state != stateGround }

// expire ends what is pending because no byte followed in time: a lone ESC
// is the Esc key, an unfinished sequence is dropped.
func (d *decoder) expire(emit func(k key, r byte)) {
	if d.state == stateEsc {
		emit(keyEsc, 0)
	}
	d.state = stateGround
}

// csi emits the key of a CSI or SS3 sequence's final byte, if it is one.
func (d *decoder) csi(final byte, emit func(k key, r byte)) {
	switch final {
	case 'A':
		emit(keyUp, 0)
	case 'B':
		emit(keyDown, 0)
	case 'C':
		emit(keyRight, 0)
	case 'D':
		emit(keyLeft, 0)
	case 'Z':
		emit(keyBackTab, 0)
	case 'M':
		emit(keyEnter, 0) // keypad enter (SS3 M)
	}
}

// ground decodes byte c between sequences: a key, or the start of one.
func (d *decoder) ground(c byte, emit func(k key, r byte)) {
	switch {
	case c == byteEsc:
		d.state = stateEsc
	case c == '\r' || c == '\n':
		emit(keyEnter, 0)
	case c == byteDel || c == byteBS:
		emit(keyBackspace, 0)
	case c == '\t':
		emit(keyTab, 0)
	case c == ctrlC:
		emit(keyCtrlC, 0)
	case c == ctrlD:
		emit(keyCtrlD, 0)
	case c == ctrlL:
		emit(keyCtrlL, 0)
	case c == ctrlU:
		emit(keyCtrlU, 0)
	case c >= ' ' && c <= '~':
		emit(keyRune, c)
	}
}

// input is one session's key decoding: the decoder, and the timer that
// turns a pending ESC into the Esc key when nothing follows it within
// escWait. The reader feeds it; the timer's callback runs on a goroutine
// of its own, so mu serialises the two. stop, called by the reader when it
// ends, makes any later callback a no-op.
type input struct {
	emit func(key, byte) // where keys go
	done <-chan struct{} // closed when the session ends: decode nothing more

	mu      sync.Mutex  // guards the fields below
	dec     decoder     //
	timer   *time.Timer // armed while a sequence is pending
	gen     uint64      // feeds so far: a timer armed before the latest feed is stale
	armed   uint64      // gen when the timer was armed
	stopped bool        // the reader ended
}

// feed decodes p and arms the Esc timer when p ends inside a sequence.
func (in *input) feed(p []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.gen++
	select {
	case <-in.done: // drain only
		return
	default:
	}
	in.dec.feed(p, in.emit)
	if !in.dec.pending() {
		return
	}
	in.armed = in.gen
	if in.timer == nil {
		in.timer = time.AfterFunc(escWait, in.expire)
	} else {
		in.timer.Reset(escWait)
	}
}

// expire is the timer's callback: a pending sequence that saw no byte
// since the timer was armed ends (see decoder.expire).
func (in *input) expire() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stopped || in.armed != in.gen {
		return
	}
	select {
	case <-in.done:
		return
	default:
	}
	in.dec.expire(in.emit)
}

// stop disarms the timer for good.
func (in *input) stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stopped = true
	if in.timer != nil {
		in.timer.Stop()
	}
}
