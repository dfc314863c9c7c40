// Package protocols is where a worker protocol is chosen by its name in
// pool.protocol: the one table a new protocol (a package implementing
// protocol.Protocol) is added to.
package protocols

import (
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/ferryproto"
	"github.com/ferry-php/ferry/internal/protocol/rrproto"
)

// Entry is one protocol as configuration names it.
type Entry struct {
	Name     string // pool.protocol's value; Protocol.Name() returns it too
	Title    string // for messages: "RoadRunner workers run ..."
	Protocol protocol.Protocol
}

var table = []Entry{
	{"ferry", "Ferry", ferryproto.Protocol{}},
	{"roadrunner", "RoadRunner", rrproto.New(rrproto.Proto)},     // roadrunner-http 3.5 and later
	{"roadrunner-json", "RoadRunner", rrproto.New(rrproto.JSON)}, // roadrunner-http before 3.5
}

// Lookup returns the protocol named name.
func Lookup(name string) (Entry, bool) {
	for _, e := range table {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Names lists the values pool.protocol accepts.
func Names() []string {
	names := make([]string, len(table))
	for i, e := range table {
		names[i] = e.Name
	}
	return names
}
