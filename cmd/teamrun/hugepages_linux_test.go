package main

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestLoadingHugePages: loading a spec of hugeLoadFrom bytes or more
// allocates in memory the kernel backs with huge pages, and stops asking
// for them once loaded; a smaller spec's loading does not ask, nor does
// any under GODEBUG=disablethp=1. Each case runs in a process of its own,
// as teamrun does: in this one, other tests leave free heap below where
// the huge pages are asked for, and the allocator would fill that first.
func TestLoadingHugePages(t *testing.T) {
	size := hugePageSize()
	if size == 0 {
		t.Skip("this kernel gives no transparent huge pages on request (/sys/kernel/mm/transparent_hugepage/enabled is not madvise): nothing to ask for")
	}
	for _, tc := range []struct {
		name      string
		specBytes int
		godebug   string
		huge      bool
	}{
		{"small spec", 4 << 10, "", false},
		{"large spec", hugeLoadFrom, "", true},
		{"large spec, GODEBUG=disablethp=1", hugeLoadFrom, "madvdontneed=1,disablethp=1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !ownProcess(t, "GODEBUG="+tc.godebug, "GOGC=") {
				return
			}
			spec := filepath.Join(t.TempDir(), "agents.yaml")
			if err := os.WriteFile(spec, make([]byte, tc.specBytes), 0o600); err != nil {
				t.Fatal(err)
			}
			before := smaps(t, 0)
			loaded := loadingGC(spec)
			// 16 MiB of fresh heap in small objects, as loading allocates it.
			held := make([][]byte, 4096)
			for i := range held {
				held[i] = make([]byte, 4096)
				held[i][0] = 1
			}
			at := uintptr(unsafe.Pointer(&held[len(held)/2][0]))
			during := smaps(t, at)
			if asked := strings.Contains(during.flags, " hg"); asked != tc.huge {
				t.Errorf("the heap allocated while loading is in a mapping with flags %q: huge pages asked for %v, want %v", during.flags, asked, tc.huge)
			}
			if grown := during.anonHuge - before.anonHuge; tc.huge && grown < size {
				t.Errorf("16 MiB allocated and touched, %d bytes more of huge pages: want at least one of %d", grown, size)
			}
			loaded()
			if after := smaps(t, at); tc.huge && !strings.Contains(after.flags, " nh") {
				t.Errorf("once loaded, the mapping's flags are %q: huge pages still asked for", after.flags)
			}
			runtime.KeepAlive(held)
		})
	}
}

type smapsInfo struct {
	anonHuge int    // AnonHugePages of the whole process, in bytes
	flags    string // VmFlags of the mapping holding the address asked for
}

// smaps reads /proc/self/smaps: the huge pages of all mappings, and the
// flags of the one holding at (0: none).
func smaps(t *testing.T, at uintptr) smapsInfo {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var info smapsInfo
	holds := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			lo, hi, _ := strings.Cut(fields[0], "-")
			l, _ := strconv.ParseUint(lo, 16, 64)
			h, _ := strconv.ParseUint(hi, 16, 64)
			holds = uint64(at) >= l && uint64(at) < h
		case strings.HasPrefix(line, "AnonHugePages:") && len(fields) == 3:
			kb, _ := strconv.Atoi(fields[1])
			info.anonHuge += kb << 10
		case strings.HasPrefix(line, "VmFlags:") && holds:
			info.flags = strings.TrimPrefix(line, "VmFlags:")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return info
}
