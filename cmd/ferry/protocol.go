package main

import (
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/protocols"
)

// workerProtocol is the protocol pool.protocol names; the configuration was
// checked against the same table, so a name not in it cannot reach here
// other than empty, which is Ferry's.
func workerProtocol(name string) protocol.Protocol {
	if e, ok := protocols.Lookup(name); ok {
		return e.Protocol
	}
	return nil // the pool, relay and gateway default to Ferry's own
}
