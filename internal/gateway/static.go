package gateway

import (
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Static serves files from a directory before requests reach PHP, like nginx's
// try_files: a path that is not a regular file falls through to the workers.
type Static struct {
	Dir          string
	Prefix       string
	Forbid       []string // suffixes never served (e.g. ".php")
	CacheControl string
}

// serve reports whether it answered the request.
func (s *Static) serve(w http.ResponseWriter, r *http.Request) bool {
	if s == nil || s.Dir == "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	p := r.URL.Path
	if !strings.HasPrefix(p, s.Prefix) {
		return false
	}
	rel := path.Clean("/" + strings.TrimPrefix(p, s.Prefix))
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") && seg != "" { // no dotfiles (.env, .git)
			return false
		}
	}
	for _, suf := range s.Forbid {
		if strings.HasSuffix(strings.ToLower(rel), strings.ToLower(suf)) {
			return false
		}
	}
	full := filepath.Join(s.Dir, filepath.FromSlash(rel))
	f, err := os.Open(full)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if s.CacheControl != "" {
		w.Header().Set("Cache-Control", s.CacheControl)
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	return true
}
