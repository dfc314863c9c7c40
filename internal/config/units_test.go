package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := map[string]Size{
		"0":          0,
		"1024":       1024,
		"8MiB":       8 << 20,
		"512KiB":     512 << 10,
		"1GB":        1_000_000_000,
		"1gb":        1_000_000_000,
		"2 MiB":      2 << 20,
		"3kb":        3000,
		"10B":        10,
		"1TiB":       1 << 40,
		"5TB":        5_000_000_000_000,
		"4GiB":       4 << 30,
		" 7MB ":      7_000_000,
		"-1MiB":      -(1 << 20),
		"8388608KiB": 8 << 30,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                     "must be a size like",
		"MiB":                  "must be a size like",
		"1.5MiB":               `unknown size unit ".5MiB"`,
		"8M":                   `unknown size unit "M"`,
		"8 mebibytes":          `unknown size unit "mebibytes"`,
		"99999999999999999999": "is too large",
		"9000000TiB":           "is too large",
		"0x10":                 `unknown size unit "x10"`,
	}
	for in, want := range bad {
		_, err := ParseSize(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSize(%q) error = %v; want it to contain %q", in, err, want)
		}
	}
}

func TestSizeStringRoundTrips(t *testing.T) {
	for _, s := range []Size{0, 1, 1000, 1024, 1536, 8 * MiB, 64 * KiB, 3 * GiB, 2 * TiB, GB, math.MaxInt64} {
		back, err := ParseSize(s.String())
		if err != nil || back != s {
			t.Errorf("%d -> %q -> %d, %v", s, s.String(), back, err)
		}
	}
	if got := (8 * MiB).String(); got != "8MiB" {
		t.Errorf("8MiB prints as %q", got)
	}
	var s Size
	if err := s.UnmarshalText([]byte("2KiB")); err != nil || s != 2048 {
		t.Errorf("UnmarshalText: %d, %v", s, err)
	}
	if b, _ := s.MarshalText(); string(b) != "2KiB" {
		t.Errorf("MarshalText: %q", b)
	}
}

func TestDurationsInParse(t *testing.T) {
	c := mustParse(t, "pool:\n  ttl: 1m30s\n  idle_ttl: 0\n  exec_ttl: 250ms\n  respawn_backoff: {min: 1s, max: 1h}\n")
	if c.Pool.TTL != 90*time.Second || c.Pool.IdleTTL != 0 || c.Pool.ExecTTL != 250*time.Millisecond ||
		c.Pool.RespawnBackoff.Max != time.Hour {
		t.Fatalf("got %+v", c.Pool)
	}
}

func TestSizesInParse(t *testing.T) {
	c := mustParse(t, "server:\n  max_body_size: 1GB\n  max_header_size: 4096\npool:\n  max_memory: 256MiB\n  max_frame_size: 2GiB\n")
	if c.Server.MaxBodySize != GB || c.Server.MaxHeaderSize != 4096 || c.Pool.MaxMemory != 256*MiB || c.Pool.MaxFrameSize != 2*GiB {
		t.Fatalf("got %+v / %+v", c.Server, c.Pool)
	}
}
