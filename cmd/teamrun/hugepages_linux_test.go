package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestLoadingHugePages: loading a spec of hugeLoadFrom bytes or more and
// a session (loadingGC) allocates in memory the kernel backs with huge
// pages, and stops asking for them once loaded, GOGC set or not; a smaller
// spec's loading does not ask, nor does a new run's (newRunGC), nor any
// under GODEBUG=disablethp=1. Each case runs in a process of its own,
// as teamrun does: in this one, other tests leave free heap below where
// the huge pages are asked for, and the allocator would fill that first.
// A case passes when one of three processes passes it: Go randomizes
// where its heap begins, and in one CI run of the whole suite the object
// checked then (one, not all) was outside the huge-page mapping, which
// ~600 runs since have not shown again (nor 300 runs of the binary: its
// loading of a 10,000-task spec faulted 1,436-2,167 times, against 5,360
// without huge pages).
func TestLoadingHugePages(t *testing.T) {
	size := hugePageSize()
	if size == 0 {
		t.Skip("this kernel gives no transparent huge pages on request (/sys/kernel/mm/transparent_hugepage/enabled is not madvise): nothing to ask for")
	}
	for _, tc := range []struct {
		name          string
		specBytes     int
		godebug, gogc string
		huge          bool
		load          func(...string) func()
	}{
		{"small spec", 4 << 10, "", "", false, loadingGC},
		{"large spec", hugeLoadFrom, "", "", true, loadingGC},
		{"large spec, a new run", hugeLoadFrom, "", "", false, newRunGC},
		{"large spec, GOGC=50", hugeLoadFrom, "", "50", true, loadingGC},
		{"large spec, GODEBUG=disablethp=1", hugeLoadFrom, "madvdontneed=1,disablethp=1", "", false, loadingGC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !ownProcess(t, 3, "GODEBUG="+tc.godebug, "GOGC="+tc.gogc) {
				return
			}
			spec := filepath.Join(t.TempDir(), "agents.yaml")
			if err := os.WriteFile(spec, make([]byte, tc.specBytes), 0o600); err != nil {
				t.Fatal(err)
			}
			before := readSmaps(t)
			loaded := tc.load(spec)
			// 16 MiB of fresh heap in small objects, as loading allocates it.
			held := make([][]byte, 4096)
			for i := range held {
				held[i] = make([]byte, 4096)
				held[i][0] = 1
			}
			during := readSmaps(t)
			// A few may land in free pages the heap had below: most may not.
			asked := during.count(held, " hg")
			if tc.huge && asked < len(held)*3/4 || !tc.huge && asked > 0 {
				t.Errorf("%d of %d objects allocated while loading are in mappings that ask for huge pages, want %s; where they are:\n%s",
					asked, len(held), map[bool]string{true: "at least 3/4", false: "none"}[tc.huge], during.where(held))
			}
			if grown := during.anonHuge - before.anonHuge; tc.huge && grown < size {
				t.Errorf("16 MiB allocated and touched, %d bytes more of huge pages: want at least one of %d", grown, size)
			}
			loaded()
			if still := readSmaps(t).count(held, " hg"); still > 0 {
				t.Errorf("once loaded, %d of %d objects are in mappings that still ask for huge pages", still, len(held))
			}
			runtime.KeepAlive(held)
		})
	}
}

// smaps is what /proc/self/smaps says of the process's mappings.
type smaps struct {
	anonHuge int // AnonHugePages of all mappings, in bytes
	maps     []mapping
}

type mapping struct {
	lo, hi uintptr
	flags  string // VmFlags, each with a space before it
}

func readSmaps(t *testing.T) smaps {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s smaps
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			lo, hi, _ := strings.Cut(fields[0], "-")
			l, _ := strconv.ParseUint(lo, 16, 64)
			h, _ := strconv.ParseUint(hi, 16, 64)
			s.maps = append(s.maps, mapping{lo: uintptr(l), hi: uintptr(h)})
		case strings.HasPrefix(line, "AnonHugePages:") && len(fields) == 3:
			kb, _ := strconv.Atoi(fields[1])
			s.anonHuge += kb << 10
		case strings.HasPrefix(line, "VmFlags:") && len(s.maps) > 0:
			s.maps[len(s.maps)-1].flags = strings.TrimPrefix(line, "VmFlags:")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// count is how many of objs are in mappings with flag.
func (s smaps) count(objs [][]byte, flag string) int {
	n := 0
	for _, o := range objs {
		if m, ok := s.holding(o); ok && strings.Contains(m.flags, flag) {
			n++
		}
	}
	return n
}

// where says which mappings hold objs, and which ask for huge pages.
func (s smaps) where(objs [][]byte) string {
	held := make(map[mapping]int)
	for _, o := range objs {
		if m, ok := s.holding(o); ok {
			held[m]++
		}
	}
	var b strings.Builder
	for _, m := range s.maps {
		if held[m] > 0 || strings.Contains(m.flags, " hg") {
			fmt.Fprintf(&b, "%x-%x %d objects, flags%s\n", m.lo, m.hi, held[m], m.flags)
		}
	}
	return b.String()
}

// holding is the mapping that holds obj.
func (s smaps) holding(obj []byte) (mapping, bool) {
	at := uintptr(unsafe.Pointer(unsafe.SliceData(obj)))
	for _, m := range s.maps {
		if at >= m.lo && at < m.hi {
			return m, true
		}
	}
	return mapping{}, false
}
