package pool

import "fmt"

// State is where a worker is in its life. Every change goes through setState so
// an impossible transition shows up as a bug instead of a silent mix-up.
type State int32

const (
	Starting State = iota // process launched, handshake pending
	Ready                 // idle, accepts jobs
	Working               // holds at least one job, accepts more up to the pipeline depth
	Retiring              // takes no new jobs, finishes the ones it holds
	Stopping              // stop frame sent, waiting for the process to exit
	Stopped               // exited after a stop
	Errored               // crashed, killed or failed to boot
)

var stateNames = [...]string{"starting", "ready", "working", "retiring", "stopping", "stopped", "errored"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// allowed lists the legal transitions; Errored is reachable from every live state.
var allowed = map[State][]State{
	Starting: {Ready, Stopping, Errored},
	Ready:    {Working, Retiring, Stopping, Errored},
	Working:  {Ready, Retiring, Errored},
	Retiring: {Stopping, Errored},
	Stopping: {Stopped, Errored},
}

func canMove(from, to State) bool {
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// accepts reports whether a worker in s may be given a new job.
func (s State) accepts() bool { return s == Ready || s == Working }

// live reports whether the process may still be running.
func (s State) live() bool { return s != Stopped && s != Errored }
