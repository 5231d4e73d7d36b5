package wire

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"testing"
	"time"

	"snaked/internal/cpuclock"
)

// wireCases are game's BenchmarkStep worlds at 100, 2,500 and 10,000 snakes:
// scripted players (with the bots their world's target asks for) and bots
// alone. players=100 is AutoSize(100) with AutoBotTarget(512, 128);
// players=2500 the daemon's default world.
var wireCases = []benchCase{
	{n: 100, w: 512, h: 128, floor: 16, target: 32},
	{n: 2500, w: 2048, h: 512, floor: 16, target: 512},
	{n: 10000, area: 1},
	{bots: true, n: 100, w: 512, h: 128},
	{bots: true, n: 2500, area: 1},
	{bots: true, n: 10000, area: 1},
}

// BenchmarkDelta times what the simulation pays each tick: Step, then
// AppendDelta, side by side in one loop, as the simulation's goroutine
// would run them (the replica's work is BenchmarkApply's, in another
// process in a cluster). ns/op is the two together; step-ns and enc-ns
// each alone (wall time), enc/step-% the encoder's wall time as a share of
// Step's, and step-cpu-ns, enc-cpu-ns and enc/step-cpu-% the same in the
// CPU time of the benchmark's (locked) thread (Linux only), which
// leaves out other processes and the GC's workers but counts a clock
// read (~1 us) in each;
// bytes/tick is the delta's size, marked/tick the slots whose records
// Step marked (the encoder's work besides the change logs). The players' script runs with the timer
// stopped, as in BenchmarkStep.
func BenchmarkDelta(b *testing.B) {
	for _, c := range wireCases {
		b.Run(c.name(), func(b *testing.B) {
			w, p := benchWorld(b, c)
			f := w.Feed()
			e := NewEncoder(w)
			buf := make([]byte, 0, 1<<20)
			var step, enc time.Duration
			var stepCPU, encCPU int64
			var bytes, marked int
			var err error
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if p != nil {
					b.StopTimer()
					p.act(w)
					b.StartTimer()
				}
				// the wall clock (vDSO) right around each call; the thread
				// CPU clock (a system call, ~1 us here) outside them
				c0 := cpuclock.Thread()
				t0 := time.Now()
				w.Step(f.Tick() + 1)
				t1 := time.Now()
				c1 := cpuclock.Thread()
				t1b := time.Now()
				buf, err = e.AppendDelta(buf[:0])
				t2 := time.Now()
				c2 := cpuclock.Thread()
				if err != nil {
					b.Fatal(err)
				}
				stepCPU += c1 - c0
				encCPU += c2 - c1
				step += t1.Sub(t0)
				enc += t2.Sub(t1b)
				bytes += len(buf)
				full, quick := f.Marked(f.Steps())
				for k, x := range full {
					marked += bits.OnesCount64(x | quick[k])
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(bytes)/n, "bytes/tick")
			b.ReportMetric(float64(marked)/n, "marked/tick")
			b.ReportMetric(float64(step)/n, "step-ns")
			b.ReportMetric(float64(enc)/n, "enc-ns")
			b.ReportMetric(100*float64(enc)/float64(step), "enc/step-%")
			if cpuclock.Thread() >= 0 {
				b.ReportMetric(float64(stepCPU)/n, "step-cpu-ns")
				b.ReportMetric(float64(encCPU)/n, "enc-cpu-ns")
				b.ReportMetric(100*float64(encCPU)/float64(stepCPU), "enc/step-cpu-%")
			}
		})
	}
}

// BenchmarkApply times a replica taking one delta in and publishing its
// view (a gateway's work per tick), over the deltas of 100 recorded ticks
// of BenchmarkDelta's worlds; the replica is rebuilt from the snapshot
// every 100 ops with the timer stopped. With behind=N the replica takes
// the deltas in runs of N, as a follower behind the stream does: all but
// the last of a run with ApplyQuiet (an op is still one delta).
func BenchmarkApply(b *testing.B) {
	for _, c := range wireCases {
		for _, run := range []int{1, 10} {
			name := c.name()
			if run > 1 {
				name += fmt.Sprintf("/behind=%d", run)
			}
			b.Run(name, func(b *testing.B) { benchApply(b, c, run) })
		}
	}
}

// benchApply is BenchmarkApply's row of world c, its deltas taken in runs
// of run.
func benchApply(b *testing.B, c benchCase, run int) {
	w, p := benchWorld(b, c)
	e := NewEncoder(w)
	chunks, err := Snapshot(w, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	deltas := make([][]byte, 100)
	for k := range deltas {
		if p != nil {
			p.act(w)
		}
		w.Step(w.Feed().Tick() + 1)
		if deltas[k], err = e.AppendDelta(nil); err != nil {
			b.Fatal(err)
		}
	}
	var r *Replica
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(deltas)
		if k == 0 {
			b.StopTimer()
			if r, err = NewReplica(chunks); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		apply := r.Apply
		if (k+1)%run != 0 {
			apply = r.ApplyQuiet
		}
		if err := apply(deltas[k]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot writes a whole world in chunks of at most 1 MiB and
// builds a replica from them: bytes and chunks
// per snapshot, and the time of both.
func BenchmarkSnapshot(b *testing.B) {
	for _, c := range []benchCase{
		{n: 2500, w: 2048, h: 512, floor: 16, target: 512},
		{bots: true, n: 10000, area: 1},
	} {
		b.Run(c.name(), func(b *testing.B) {
			w, _ := benchWorld(b, c)
			var write, read time.Duration
			var bytes, count int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				chunks, err := Snapshot(w, 1<<20)
				t1 := time.Now()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := NewReplica(chunks); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				write += t1.Sub(t0)
				read += t2.Sub(t1)
				count = len(chunks)
				bytes = 0
				for _, ch := range chunks {
					bytes += len(ch)
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(bytes), "bytes")
			b.ReportMetric(float64(count), "chunks")
			width, height := w.Feed().Size()
			b.ReportMetric(float64(width*height*4), "raw-bytes")
			b.ReportMetric(float64(write)/n, "write-ns")
			b.ReportMetric(float64(read)/n, "replica-ns")
		})
	}
}

// BenchmarkAppendDeltaAgain encodes one tick's delta of the bots=2500
// world over and over, the encoder's baseline put back with the timer
// stopped: the encoder alone, for instruction counts (callgrind) rather
// than for time (the copy back evicts its data from the caches).
func BenchmarkAppendDeltaAgain(b *testing.B) {
	w, _ := benchWorld(b, benchCase{bots: true, n: 2500, area: 1})
	e := NewEncoder(w)
	w.Step(w.Feed().Tick() + 1)
	save := *e
	sent := slices.Clone(e.sent)
	shape := slices.Clone(e.shape)
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		*e = save
		copy(e.sent, sent)
		copy(e.shape, shape)
		b.StartTimer()
		buf, _ = e.AppendDelta(buf[:0])
	}
	b.ReportMetric(float64(len(buf)), "bytes")
}

// BenchmarkPixLog encodes the change log of one step of the 2,500-snake
// worlds over and over: the encoder's inner loop alone, in ns a change.
func BenchmarkPixLog(b *testing.B) {
	for _, c := range []benchCase{wireCases[1], wireCases[4]} {
		b.Run(c.name(), func(b *testing.B) {
			w, p := benchWorld(b, c)
			if p != nil {
				p.act(w)
			}
			w.Step(w.Feed().Tick() + 1)
			log := w.Feed().Writes(w.Feed().Steps())
			buf := make([]byte, 0, 1<<20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var pc pixCoder
				buf = pc.appendLog(buf[:0], log)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(len(log)), "ns/change")
			b.ReportMetric(float64(len(buf))/float64(len(log)), "bytes/change")
			b.ReportMetric(float64(len(log)), "changes")
		})
	}
}
