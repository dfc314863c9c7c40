package config

import (
	"path/filepath"
)

// resolvePaths makes every path the file names relative to base, the
// directory the file is in, so that `ferry reload -c /srv/app/ferry.yaml` or a
// systemd unit finds what `ferry serve` run from /srv/app finds: the meaning
// of a config file must not depend on the shell it is used from. base is
// absolute; "" (a config that came from no file) keeps today's meaning,
// relative to Ferry's working directory.
//
// The workers run in pool.dir, which defaults to base: the words of
// pool.command and the values of pool.php.ini and pool.env are PHP's to read,
// relative to where it runs, as they always were. pool.php.preload is one of
// those, so it is anchored to pool.dir rather than to base: a file with
// `pool.dir: app` and `preload: preload.php` keeps meaning app/preload.php.
func (c *Config) resolvePaths(base string) {
	if base == "" {
		return
	}
	at := func(dir string, p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	s := &c.Server
	at(base, &s.Static.Dir)
	at(base, &s.Uploads.Dir)
	at(base, &s.TLS.Cert)
	at(base, &s.TLS.Key)
	if s.AccessLog.Path != "stderr" {
		at(base, &s.AccessLog.Path)
	}
	for i := range s.Watch {
		at(base, &s.Watch[i])
	}
	p := &c.Pool
	if p.Dir == "" {
		p.Dir = base
	}
	at(base, &p.Dir)
	at(p.Dir, &p.PHP.Preload)
	if ExtensionPath(p.PHP.Extension) != "" {
		at(base, &p.PHP.Extension)
	}
	at(base, &c.Admin.Socket)
	if o := c.Log.Output; o != "stderr" && o != "stdout" {
		at(base, &c.Log.Output)
	}
}

// baseDir is the absolute directory of a config file's path.
func baseDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "" // no working directory: paths stay as written
	}
	return filepath.Dir(abs)
}
