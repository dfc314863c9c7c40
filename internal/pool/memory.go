package pool

import (
	"bytes"
	"os"
	"strconv"
)

// Memory is what a process uses, in bytes, from /proc/<pid>/smaps_rollup.
// Workers forked from one booted process (and, less, any processes of the
// same PHP binary) share pages: RSS counts each shared page in every sharer,
// so a cap on it retires workers for memory they do not own. USS, the pages
// only this process maps, is what exiting it gives back; PSS divides each
// shared page among its sharers, so the workers' PSS adds up to what they use
// together.
type Memory struct {
	RSS, PSS, USS uint64
}

// readMemory reads pid's smaps_rollup (Linux 4.14 and later); false when it
// cannot be read, as on an older kernel or for a process already gone.
func readMemory(pid int) (Memory, bool) {
	if pid == 0 {
		return Memory{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return Memory{}, false
	}
	return parseRollup(b)
}

// owned is what max_memory compares: USS, or RSS where smaps_rollup cannot
// be read. It also names which one it is, for the log.
func owned(pid int) (uint64, string) {
	if m, ok := readMemory(pid); ok {
		return m.USS, "uss"
	}
	return rss(pid), "rss"
}

// parseRollup reads the fields of smaps_rollup it needs; the format is one
// "Name:   <n> kB" per line after a header line of address ranges. It is
// false without an Rss line, which every kernel that has the file writes.
func parseRollup(b []byte) (Memory, bool) {
	var m Memory
	var private uint64
	rssSeen := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var dst *uint64
		switch string(name) {
		case "Rss":
			dst, rssSeen = &m.RSS, true
		case "Pss":
			dst = &m.PSS
		case "Private_Clean", "Private_Dirty":
			dst = &private
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return Memory{}, false
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil || kb > 1<<53 { // no overflow once in bytes
			return Memory{}, false
		}
		*dst += kb << 10
	}
	if !rssSeen {
		return Memory{}, false
	}
	m.USS = private
	return m, true
}
