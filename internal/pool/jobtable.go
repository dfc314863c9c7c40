package pool

// jobTable finds the jobs a worker holds by id, without hashing: an id is a
// slot number in its low 16 bits and the slot's use count above them. A slot
// holds one job at a time, so ids are unique among the jobs in flight, and a
// freed slot comes back with another id, so an id is not seen again until its
// slot has served 65535 more jobs. No id is 0, which means "none" to the
// exec_ttl watchdog. Under the worker's lock.
type jobTable struct {
	slots []*job
	uses  []uint16
	free  []uint16
}

// slotBits bounds the jobs one worker holds at once; pool.pipeline is far
// below it.
const slotBits = 16

func (t *jobTable) add(j *job) uint32 {
	var s uint16
	if n := len(t.free); n > 0 {
		s, t.free = t.free[n-1], t.free[:n-1]
	} else {
		if len(t.slots) == 1<<slotBits {
			panic("pool: more than 65536 jobs held by one worker")
		}
		s = uint16(len(t.slots))
		t.slots = append(t.slots, nil)
		t.uses = append(t.uses, 0)
	}
	t.uses[s]++
	if t.uses[s] == 0 {
		t.uses[s] = 1
	}
	j.id = uint32(t.uses[s])<<slotBits | uint32(s)
	t.slots[s] = j
	return j.id
}

func (t *jobTable) get(id uint32) *job {
	s := id & (1<<slotBits - 1)
	if int(s) < len(t.slots) {
		if j := t.slots[s]; j != nil && j.id == id {
			return j
		}
	}
	return nil
}

// del frees id's slot; an id not held is ignored.
func (t *jobTable) del(id uint32) {
	if t.get(id) == nil {
		return
	}
	s := uint16(id & (1<<slotBits - 1))
	t.slots[s] = nil
	t.free = append(t.free, s)
}

// all appends every job held to dst.
func (t *jobTable) all(dst []*job) []*job {
	for _, j := range t.slots {
		if j != nil {
			dst = append(dst, j)
		}
	}
	return dst
}
