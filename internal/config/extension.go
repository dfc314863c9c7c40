package config

import (
	"fmt"
	"strings"
)

// pool.php.extension: whether the workers load ext/ferry, the optional C
// extension (ext/ferry/README.md). The key only says what is wanted; finding
// ferry.so and checking that PHP loads it needs the filesystem and a php
// process, so ferry serve does it at start (cmd/ferry) and reports the file
// back with SetExtensionFile.
const (
	ExtensionAuto = "auto" // load it when it is built; pure PHP otherwise
	ExtensionOn   = "on"   // load it; ferry serve fails to start without it
	ExtensionOff  = "off"  // never add it
)

// CheckExtension validates a pool.php.extension value: auto, on, off, or
// the path of a ferry.so (which means on, with that file).
func CheckExtension(v string) error {
	switch v {
	case ExtensionAuto, ExtensionOn, ExtensionOff:
		return nil
	}
	if strings.ContainsAny(v, "\x00\r\n") || !strings.HasSuffix(v, ".so") || !strings.Contains(v, "/") {
		return fmt.Errorf("must be auto, on, off or the path of ferry.so (containing a \"/\", ending in .so), got %q", v)
	}
	return nil
}

// ExtensionPath returns the file a pool.php.extension value names, "" for
// auto, on and off.
func ExtensionPath(v string) string {
	if CheckExtension(v) != nil || v == ExtensionAuto || v == ExtensionOn || v == ExtensionOff {
		return ""
	}
	return v
}

// SetExtensionFile makes PHPArgs load ferry.so from file ("" loads nothing:
// the extension is off, missing, or php.ini loads it already).
func (c *Config) SetExtensionFile(file string) {
	c.extensionFile = file
}

// ExtensionFile is what SetExtensionFile set.
func (c *Config) ExtensionFile() string {
	return c.extensionFile
}
