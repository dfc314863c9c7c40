// Package watch reloads the workers when files matching the configured globs
// change, for development (server.watch), as RoadRunner's reload plugin does.
package watch

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long the files must stay quiet before a reload: a save, a
// git checkout or a build writes many files in a burst, which is one reload.
const Debounce = 200 * time.Millisecond

// Watcher watches the directories under the globs' fixed prefixes.
type Watcher struct {
	globs  []string // cleaned, relative to the working directory or absolute
	fw     *fsnotify.Watcher
	reload func()
	log    *slog.Logger
	done   chan struct{}
}

// Start watches the directories the globs can match in, and calls reload
// after a burst of changes to matching files has settled.
func Start(globs []string, reload func(), log *slog.Logger) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watcher{fw: fw, reload: reload, log: log, done: make(chan struct{})}
	roots := map[string]bool{}
	for _, g := range globs {
		g = filepath.ToSlash(filepath.Clean(g))
		w.globs = append(w.globs, g)
		roots[Root(g)] = true
	}
	n := 0
	for r := range roots {
		c, err := w.addTree(r)
		if err != nil {
			fw.Close()
			return nil, err
		}
		n += c
	}
	log.Info("watching for changes", "globs", globs, "directories", n)
	go w.loop()
	return w, nil
}

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.fw.Close()
	<-w.done
	return err
}

// addTree watches dir and every directory below it, except hidden ones
// (.git and the like change often and hold no code).
func (w *Watcher) addTree(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // a directory that vanished or is unreadable: skip it
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := w.fw.Add(path); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

func (w *Watcher) loop() {
	defer close(w.done)
	var (
		timer   *time.Timer
		settled <-chan time.Time
		first   string
	)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() && !strings.HasPrefix(filepath.Base(ev.Name), ".") {
					w.addTree(ev.Name) // a new directory: what is created in it counts too
				}
			}
			if ev.Op == fsnotify.Chmod || !w.matches(ev.Name) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(Debounce)
				first = ev.Name
			} else {
				timer.Reset(Debounce)
			}
			settled = timer.C
		case <-settled:
			timer, settled = nil, nil
			w.log.Info("files changed: reloading the workers", "file", first)
			w.reload()
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("too many file changes at once: reloading the workers")
				w.reload()
				continue
			}
			w.log.Warn("file watch", "error", err)
		}
	}
}

func (w *Watcher) matches(path string) bool {
	path = filepath.ToSlash(filepath.Clean(path))
	for _, g := range w.globs {
		if Match(g, path) {
			return true
		}
	}
	return false
}

// Root is the directory a glob's matches are under: its part before the
// first segment with a wildcard.
func Root(glob string) string {
	segs := strings.Split(glob, "/")
	i := 0
	for i < len(segs) && !strings.ContainsAny(segs[i], "*?[") {
		i++
	}
	if i == len(segs) { // no wildcard: a single file, watched through its directory
		i--
	}
	root := strings.Join(segs[:i], "/")
	switch {
	case root == "" && strings.HasPrefix(glob, "/"):
		return "/"
	case root == "":
		return "."
	}
	return root
}

// Match reports whether path matches glob, where "**" stands for any number
// of directories (none included) and the other segments follow
// filepath.Match. A relative glob is matched against a relative path.
func Match(glob, path string) bool {
	if glob == "." {
		return true
	}
	g := strings.Split(glob, "/")
	p := strings.Split(path, "/")
	return matchSegs(g, p)
}

func matchSegs(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchSegs(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := filepath.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
