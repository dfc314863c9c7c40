package compress

import "testing"

func TestAcceptQ(t *testing.T) {
	for _, c := range []struct {
		ae     string
		br, gz int
	}{
		{"gzip", 0, 1000},
		{"gzip, br", 1000, 1000},
		{"GZIP;Q=0.5, Br;q=0.25", 250, 500},
		{"br;q=0, gzip;q=0.001", 0, 1},
		{"*", 1000, 1000},
		{"*;q=0.3, gzip", 300, 1000},
		{"x-gzip", 0, 1000},
		{"gzip;q=1.0", 0, 1000},
		{"gzip;q=1.", 0, 1000},
		{"gzip;q=1.5", 0, 0},
		{"gzip;q=2", 0, 0},
		{"gzip;q=0.1234", 0, 0},
		{"gzip;q=abc", 0, 0},
		{"gzip ; level=9 ; q=0.7", 0, 700},
		{"brotli, gzipped", 0, 0},
		{"identity", 0, 0},
		{",,, br ,", 1000, 0},
	} {
		if br, gz := AcceptQ([]byte(c.ae), "br", ""), AcceptQ([]byte(c.ae), "gzip", "x-gzip"); br != c.br || gz != c.gz {
			t.Errorf("%q: br %d gzip %d, want %d %d", c.ae, br, gz, c.br, c.gz)
		}
	}
}
