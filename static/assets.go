package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// asset is one embedded file as served: its bytes, gzipped once (when that
// is smaller), and a hash of its content for URLs and ETags.
type asset struct {
	raw, gz []byte
	hash    string // 12 hex digits of SHA-256
	ctype   string
}

var (
	loadOnce sync.Once
	assets   map[string]*asset // by path under FS, "css/app.css"
)

func load() {
	assets = map[string]*asset{}
	_ = fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		a := &asset{raw: raw, hash: hex.EncodeToString(sum[:6]), ctype: mime.TypeByExtension(path.Ext(p))}
		if a.ctype == "" {
			a.ctype = http.DetectContentType(raw)
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(raw)
		_ = zw.Close()
		if buf.Len() < len(raw)*9/10 {
			a.gz = buf.Bytes()
		}
		assets[p] = a
		return nil
	})
}

// URL is the address of the embedded file name ("css/app.css") with its
// content's hash in the query: pages link assets through it, so that a
// browser may keep them a year and still gets a new file the moment it
// changes. An unknown name gets its plain address.
func URL(name string) string {
	loadOnce.Do(load)
	if a, ok := assets[name]; ok {
		return "/static/" + name + "?v=" + a.hash
	}
	return "/static/" + name
}

// Handler serves the embedded files under /static/: gzipped to clients that
// take it, with an ETag of the content, and cached for a year when the URL
// carries the content's hash (URL), revalidated each time otherwise.
func Handler() http.Handler {
	loadOnce.Do(load)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		a, ok := assets[strings.TrimPrefix(r.URL.Path, "/static/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("ETag", `"`+a.hash+`"`)
		h.Add("Vary", "Accept-Encoding")
		if r.URL.Query().Get("v") == a.hash {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, a.hash) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := a.raw
		if a.gz != nil && AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			body = a.gz
			h.Set("Content-Encoding", "gzip")
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("Last-Modified", modTime)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// modTime is when this process started: embedded files have none of their own.
var modTime = time.Now().UTC().Format(http.TimeFormat)

func etagMatches(header, hash string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == `"`+hash+`"` {
			return true
		}
	}
	return false
}

// AcceptsGzip reports whether an Accept-Encoding header takes gzip (and
// does not refuse it with q=0): for the assets here and the pages' own
// compression alike.
func AcceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) != "gzip" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}
