package status

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"
)

// The page's files: its template, stylesheet and script, built into the
// binary; no build step makes them.
//
//go:embed assets/page.html assets/status.css assets/status.js
var files embed.FS

// noScriptRefresh is how often a browser without JavaScript reloads the
// page, in seconds.
const noScriptRefresh = 15

// asset is a static file as served: its bytes, type and a hash of them
// for its URL, so a browser may keep it until it changes.
type asset struct {
	body  []byte
	ctype string
	url   string // its path and ?v=hash
}

// assets are the page's template and its static files.
type assets struct {
	page       *template.Template
	css, js    asset
	byPath     map[string]*asset
	pageFields pageStatics
}

// pageStatics are the page's fields that never change.
type pageStatics struct {
	CSS, JS         string
	NoScriptRefresh int
}

func loadAssets() (assets, error) {
	var a assets
	load := func(name, path, ctype string) (asset, error) {
		b, err := files.ReadFile("assets/" + name)
		if err != nil {
			return asset{}, fmt.Errorf("status: %w", err)
		}
		h := sha256.Sum256(b)
		return asset{body: b, ctype: ctype, url: path + "?v=" + hex.EncodeToString(h[:6])}, nil
	}
	var err error
	if a.css, err = load("status.css", "/static/status.css", "text/css; charset=utf-8"); err != nil {
		return a, err
	}
	if a.js, err = load("status.js", "/static/status.js", "text/javascript; charset=utf-8"); err != nil {
		return a, err
	}
	a.byPath = map[string]*asset{"/static/status.css": &a.css, "/static/status.js": &a.js}
	if a.page, err = template.ParseFS(files, "assets/page.html"); err != nil {
		return a, fmt.Errorf("status: %w", err)
	}
	a.pageFields = pageStatics{CSS: a.css.url, JS: a.js.url, NoScriptRefresh: noScriptRefresh}
	return a, nil
}

// pageData is what the page's template reads.
type pageData struct {
	*Status
	pageStatics
	Spectate    string
	MapW, MapH  int
	HasBoards   bool // the server keeps scores
	BoardsShown bool // and the boards shown are the newest read
}

// renderPage renders the page for st.
func (s *Server) renderPage(st *Status) []byte {
	d := pageData{Status: st, pageStatics: s.assets.pageFields, Spectate: s.cfg.Spectate,
		HasBoards: s.cfg.Boards != nil, BoardsShown: st.Scores != nil && st.Scores.Available}
	d.MapW, d.MapH, _ = mapSize(st.World[0], st.World[1])
	var b bytes.Buffer
	if err := s.assets.page.Execute(&b, d); err != nil {
		s.log.Error("status: page", "err", err)
		return []byte("<!doctype html><title>snaked</title><p>The status page failed; see the daemon's log.")
	}
	return b.Bytes()
}

// csp is the page's Content-Security-Policy: its own script, stylesheet,
// images and event stream, nothing inline, nothing from elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler is the page's HTTP handler (Serve uses it): GET and HEAD only.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /api/status", s.serveStatus)
	mux.HandleFunc("GET /api/scores", s.serveScores)
	mux.HandleFunc("GET /minimap.png", s.serveMinimap)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /static/", s.serveAsset)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.URL.Path != "/events" {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeWait))
		}
		mux.ServeHTTP(w, r)
	})
}

// reply writes body with its type, unless the request is a HEAD.
func reply(w http.ResponseWriter, r *http.Request, ctype, cache string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", cache)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	reply(w, r, "text/html; charset=utf-8", "no-store", s.want(r.Context()).page)
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	reply(w, r, "application/json", "no-store", s.want(r.Context()).status)
}

func (s *Server) serveScores(w http.ResponseWriter, r *http.Request) {
	reply(w, r, "application/json", "no-store", s.want(r.Context()).scores)
}

// serveMinimap serves the newest minimap, whatever its URL's ?v= says:
// the page names each new one by its snapshot so the browser fetches it.
func (s *Server) serveMinimap(w http.ResponseWriter, r *http.Request) {
	reply(w, r, "image/png", "no-store", s.want(r.Context()).minimap)
}

func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	a := s.assets.byPath[r.URL.Path]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	reply(w, r, a.ctype, "public, max-age=86400", a.body)
}
