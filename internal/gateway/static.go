package gateway

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/valyala/fasthttp"
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
func (s *Static) serve(ctx *fasthttp.RequestCtx) bool {
	if s == nil || s.Dir == "" || !(ctx.IsGet() || ctx.IsHead()) {
		return false
	}
	p := string(ctx.Path())
	if !strings.HasPrefix(p, s.Prefix) {
		return false
	}
	rel := path.Clean("/" + strings.TrimPrefix(p, s.Prefix))
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") { // no dotfiles (.env, .git)
			return false
		}
	}
	low := strings.ToLower(rel)
	for _, suf := range s.Forbid {
		if strings.HasSuffix(low, strings.ToLower(suf)) {
			return false
		}
	}
	full := filepath.Join(s.Dir, filepath.FromSlash(rel))
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if s.CacheControl != "" {
		ctx.Response.Header.Set("Cache-Control", s.CacheControl)
	}
	ctx.SendFile(full)
	return true
}
