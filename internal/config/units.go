package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Size is a byte count written in ferry.yaml as "8MiB", "512KiB", "1GB" or a
// plain number of bytes.
type Size int64

// Byte multiples. Binary units (KiB...) are powers of 1024, SI units (KB...)
// powers of 1000, as their names say.
const (
	B   Size = 1
	KiB      = 1024 * B
	MiB      = 1024 * KiB
	GiB      = 1024 * MiB
	TiB      = 1024 * GiB
	KB       = 1000 * B
	MB       = 1000 * KB
	GB       = 1000 * MB
	TB       = 1000 * GB
)

var sizeUnits = map[string]Size{
	"b":   B,
	"kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB,
	"kb": KB, "mb": MB, "gb": GB, "tb": TB,
}

// ParseSize reads an integer followed by an optional unit (B, KB, MB, GB, TB,
// KiB, MiB, GiB, TiB; case-insensitive, space allowed before the unit). A
// leading '-' is accepted so that Validate can report the value as out of
// range rather than as unreadable.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := 0
	if i < len(t) && (t[i] == '-' || t[i] == '+') {
		i++
	}
	start := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == start {
		return 0, fmt.Errorf("must be a size like \"8MiB\", \"512KiB\", \"1GB\" or a number of bytes, got %q", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult := B
	if unit != "" {
		m, ok := sizeUnits[unit]
		if !ok {
			return 0, fmt.Errorf("unknown size unit %q in %q (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB; whole numbers only)", strings.TrimSpace(t[i:]), s)
		}
		mult = m
	}
	if n > math.MaxInt64/int64(mult) || n < math.MinInt64/int64(mult) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n) * mult, nil
}

// String prints the size in the largest binary unit that divides it exactly,
// so it reads back to the same value.
func (s Size) String() string {
	for _, u := range []struct {
		name string
		v    Size
	}{{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
		if s != 0 && s%u.v == 0 {
			return strconv.FormatInt(int64(s/u.v), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalText lets a Size print as it is written in the file.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText accepts the same forms as ParseSize.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// parseDuration wraps time.ParseDuration with a message that shows the
// expected form, since a bare "30" (no unit) is the usual mistake.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		if _, nerr := strconv.ParseFloat(t, 64); nerr == nil && t != "0" {
			return 0, fmt.Errorf("must be a duration with a unit like \"5s\", \"1m30s\" or \"250ms\", got %q (missing unit?)", s)
		}
		return 0, fmt.Errorf("must be a duration like \"5s\", \"1m30s\" or \"250ms\", got %q", s)
	}
	return d, nil
}
