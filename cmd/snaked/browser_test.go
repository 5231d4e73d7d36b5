package main

// The status page in a real browser: headless Chromium (Debian's chromium
// package; .ci/run installs it when missing) loads the page of the real
// daemon. SNAKED_SKIP_BROWSER=1 skips the test where no browser can run.

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserStatusPage: the fingerprint the page shows is the daemon's,
// the player count goes up within seconds of an SSH client joining, and
// the minimap is drawn and not blank. The page's screenshot is kept in the
// test's artifact directory (go test -artifacts keeps it).
func TestBrowserStatusPage(t *testing.T) {
	if os.Getenv("SNAKED_SKIP_BROWSER") != "" {
		t.Skip("SNAKED_SKIP_BROWSER is set")
	}
	need(t, "chromium")
	chromium, _ := exec.LookPath("chromium")

	d := startDaemon(t, buildSnaked(t), "-http-addr", "127.0.0.1:0", "-http-streams", "4")
	if d.page == "" || d.fingerprint == "" {
		t.Fatalf("page %q, fingerprint %q: not printed at start", d.page, d.fingerprint)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1024, 1400))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()

	fpSel, playersSel := chromedp.CSS("#fingerprint"), chromedp.CSS("#players")
	if err := chromedp.Do(ctx, chromedp.Navigate(d.page), chromedp.WaitVisible(fpSel)); err != nil {
		t.Fatalf("loading %s: %v", d.page, err)
	}
	fp, err := chromedp.Run(ctx, chromedp.Text(fpSel))
	if err != nil {
		t.Fatal(err)
	}
	if fp != d.fingerprint {
		t.Errorf("the page's fingerprint is %q, the daemon's %q", fp, d.fingerprint)
	}
	players, err := chromedp.Run(ctx, chromedp.Text(playersSel))
	if err != nil {
		t.Fatal(err)
	}
	before, err := strconv.Atoi(strings.TrimSpace(players))
	if err != nil {
		t.Fatalf("players on the page: %q", players)
	}

	p, err := dialPlayer(d.addr, "127.0.0.1", "browsertest", 10*time.Second)
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	defer p.cl.Close()
	// The page's own live updates must show the player: no reload.
	joined := "Number(document.getElementById('players').textContent) > " + strconv.Itoa(before)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](joined, chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(8*time.Second))); err != nil {
		players, _ = chromedp.Run(ctx, chromedp.Text(playersSel))
		t.Fatalf("the page still shows %s players (%d before an SSH client joined): %v", players, before, err)
	}

	// The minimap: loaded by the browser, and more than background as
	// drawn on the page.
	mapLoaded := "(function(){const i=document.getElementById('minimap');return i.complete&&i.naturalWidth>0})()"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](mapLoaded, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("the minimap did not load: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#minimap")))
	if err != nil {
		t.Fatalf("the minimap's screenshot: %v", err)
	}
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("the page's screenshot: %v", err)
	}
	path := filepath.Join(t.ArtifactDir(), "status-page.png")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the minimap's screenshot: %v", err)
	}
	if n := colours(img); n < 3 {
		t.Errorf("the minimap shows %d colours: blank", n)
	}
}

// colours counts the distinct colours of img, up to 16.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 16; y++ {
		for x := b.Min.X; x < b.Max.X && len(seen) < 16; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}
