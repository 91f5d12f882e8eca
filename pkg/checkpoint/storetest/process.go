package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Main is TestMain for a backend's tests: the test binary doubles as the
// child process of the cross-process tests, which TEAMRUN_STORETEST_CHILD
// selects; open opens the store those children use.
func Main(m *testing.M, open func(location string) (checkpoint.Backend, error)) {
	var err error
	switch os.Getenv("TEAMRUN_STORETEST_CHILD") {
	case "":
		os.Exit(m.Run())
	case "record":
		err = childRecord(open)
	case "lock":
		err = childLock(open)
	case "hold":
		err = childHold(open)
	case "claim":
		err = childClaim(open)
	default:
		err = errors.New("unknown TEAMRUN_STORETEST_CHILD")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func childStore(open func(string) (checkpoint.Backend, error)) (checkpoint.Backend, string, error) {
	s, err := open(os.Getenv("TEAMRUN_STORETEST_LOCATION"))
	if err != nil {
		return nil, "", err
	}
	return s, os.Getenv("TEAMRUN_STORETEST_ID"), nil
}

// crashResult is the result of transition k's task: deterministic, with
// bytes that are not UTF-8, so a restore can be checked byte for byte.
func crashResult(task int) string {
	return fmt.Sprintf("result of t%d \xff\xfe %s", task, strings.Repeat(strconv.Itoa(task%10), 200+task%300))
}

// transitions counts what a session holds: two per completed task, one for
// a task left running. ok is false when the tasks are not a gapless prefix
// t0, t1, ... with the right results.
func transitions(sess *checkpoint.Session) (n int, err error) {
	for i, tr := range sess.Team.Tasks {
		if tr.Name != fmt.Sprintf("t%d", i) {
			return 0, fmt.Errorf("task %d is %q", i, tr.Name)
		}
		switch tr.Status {
		case checkpoint.StatusCompleted:
			if tr.Result != crashResult(i) {
				return 0, fmt.Errorf("t%d: result differs: %q", i, tr.Result)
			}
			if n != 2*i {
				return 0, fmt.Errorf("t%d completed after an unfinished task", i)
			}
			n += 2
		case checkpoint.StatusRunning:
			if i != len(sess.Team.Tasks)-1 {
				return 0, fmt.Errorf("t%d running but not last", i)
			}
			n++
		default:
			return 0, fmt.Errorf("t%d: status %s", i, tr.Status)
		}
	}
	return n, nil
}

// childRecord appends transitions forever, printing how many are durable
// after each one, until it is killed. Now and then it compacts explicitly.
func childRecord(open func(string) (checkpoint.Backend, error)) error {
	s, id, err := childStore(open)
	if err != nil {
		return err
	}
	l, err := s.Lock(context.Background(), id, 0)
	if err != nil {
		return err // a killed holder must not leave the lock behind
	}
	sess, err := s.Load(bg, id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		sess = checkpoint.NewSession(id, "crash.yaml", "crash", "sequential", nil, "fp", time.Now())
	} else if err != nil {
		return err
	}
	n, err := transitions(sess)
	if err != nil {
		return fmt.Errorf("loaded session is wrong: %w", err)
	}
	j, err := s.Begin(bg, l, sess)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	transition := func(n int) checkpoint.Record {
		task := n / 2
		r := checkpoint.Record{Kind: checkpoint.TaskStarted, Task: fmt.Sprintf("t%d", task)}
		if n%2 == 1 {
			r = checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: r.Task, Result: crashResult(task), Variables: map[string]any{"n": n}}
		}
		return r
	}
	for ; ; n++ {
		// Half the completions go with the next task's start, as a
		// sequential run records them: one batch, one sync.
		if n%2 == 1 && rand.IntN(2) == 0 {
			if err := checkpoint.RecordAll(j, transition(n), transition(n+1)); err != nil {
				return err
			}
			n++
		} else if err := j.Record(transition(n)); err != nil {
			return err
		}
		fmt.Fprintf(out, "%d\n", n+1)
		if err := out.Flush(); err != nil {
			return err
		}
		if rand.IntN(50) == 0 {
			if err := j.Close(); err != nil {
				return err
			}
			if j, err = s.Begin(bg, l, j.Session()); err != nil {
				return err
			}
		}
	}
}

func (h Harness) childEnv(location, id string, extra ...string) []string {
	env := append(os.Environ(), "TEAMRUN_STORETEST_LOCATION="+location, "TEAMRUN_STORETEST_ID="+id)
	return append(append(env, h.ChildEnv...), extra...)
}

// TestCrashKill really kills: a child records transitions in a loop and is
// SIGKILLed at random moments; after each kill the session loads and holds
// every transition the child acknowledged, with nothing lost before them.
func testCrashKill(t *testing.T, h Harness) {
	kills, budget := 200, 75*time.Second
	if testing.Short() {
		kills, budget = 20, 15*time.Second
	}
	home := h.Shared(t)
	s, err := h.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "crash"
	start := time.Now()
	durable, killed, early := 0, 0, 0
	for killed < kills && time.Since(start) < budget {
		cmd := exec.Command(os.Args[0])
		cmd.Env = h.childEnv(home, id, "TEAMRUN_STORETEST_CHILD=record")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acks := make(chan int, 1<<16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if n, err := strconv.Atoi(sc.Text()); err == nil {
					acks <- n
				}
			}
			close(acks)
		}()
		acked := 0
		if rand.IntN(4) == 0 {
			// Anywhere: while starting, loading, beginning or recording.
			time.Sleep(time.Duration(rand.IntN(15000)) * time.Microsecond)
			early++
		} else {
			// While recording: after the first acknowledgement.
			select {
			case n, ok := <-acks:
				if ok {
					acked = n
				}
			case <-time.After(30 * time.Second):
			}
			time.Sleep(time.Duration(rand.IntN(20000)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		// Every ack the child wrote is read before Wait, which closes the
		// pipe: lines still in it would be lost, and the session would
		// seem to hold records the child never acknowledged.
		for n := range acks {
			acked = max(acked, n)
		}
		werr := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: child ended by itself (%v): %s", killed, werr, stderr.String())
		}
		killed++
		sess, err := s.Load(bg, id)
		if errors.Is(err, checkpoint.ErrNotFound) && acked == 0 && durable == 0 {
			continue // killed before its first snapshot
		}
		if err != nil {
			t.Fatalf("kill %d: session does not load: %v", killed, err)
		}
		n, err := transitions(sess)
		if err != nil {
			t.Fatalf("kill %d: %v", killed, err)
		}
		// Every acknowledged transition is there; at most the record or
		// batch (two) being acknowledged when the kill came is extra;
		// nothing went backwards.
		if n < acked || n > max(acked, durable)+2 || n < durable {
			t.Fatalf("kill %d: session holds %d transitions; child acknowledged %d, %d were durable before", killed, n, acked, durable)
		}
		durable = n
	}
	t.Logf("%d kills (%d at random moments) in %v; %d transitions durable", killed, early, time.Since(start).Round(time.Millisecond), durable)
	if killed < kills {
		t.Logf("time budget reached before %d kills (slow machine)", kills)
	}
}

// childLock tries the lock once at an agreed instant: "won" and holds it
// until stdin closes, or "held <pid>".
func childLock(open func(string) (checkpoint.Backend, error)) error {
	s, id, err := childStore(open)
	if err != nil {
		return err
	}
	at, _ := strconv.ParseInt(os.Getenv("TEAMRUN_STORETEST_AT"), 10, 64)
	time.Sleep(time.Until(time.Unix(0, at)))
	l, err := s.Lock(context.Background(), id, 0)
	var he *checkpoint.HeldError
	switch {
	case err == nil:
		fmt.Printf("won %d\n", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		return l.Release()
	case errors.As(err, &he) && errors.Is(err, checkpoint.ErrLocked):
		fmt.Printf("held %d\n", he.PID)
		return nil
	}
	return err
}

// TestLockRace: 20 processes try to lock one session at the same instant;
// exactly one wins each round, the others fail at once naming it.
func testLockRace(t *testing.T, h Harness) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	home := h.Shared(t)
	for round := 0; round < rounds; round++ {
		id := fmt.Sprintf("race-%d", round%2) // reuse a lock file left by an earlier round
		at := time.Now().Add(time.Second).UnixNano()
		type child struct {
			cmd   *exec.Cmd
			stdin io.WriteCloser
			line  chan string
		}
		var kids []child
		for i := 0; i < 20; i++ {
			cmd := exec.Command(os.Args[0])
			cmd.Env = h.childEnv(home, id, "TEAMRUN_STORETEST_CHILD=lock", fmt.Sprintf("TEAMRUN_STORETEST_AT=%d", at))
			cmd.Stderr = os.Stderr
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			c := child{cmd: cmd, stdin: stdin, line: make(chan string, 1)}
			go func() {
				sc := bufio.NewScanner(stdout)
				sc.Scan()
				c.line <- sc.Text()
				io.Copy(io.Discard, stdout)
			}()
			kids = append(kids, c)
		}
		winners, winner := 0, 0
		var held []int
		for _, c := range kids {
			f := strings.Fields(<-c.line)
			if len(f) != 2 {
				t.Fatalf("round %d: child said %q", round, f)
			}
			pid, _ := strconv.Atoi(f[1])
			if f[0] == "won" {
				winners++
				winner = pid
			} else {
				held = append(held, pid)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners", round, winners)
		}
		unnamed := 0
		for _, pid := range held {
			switch pid {
			case winner:
			case 0:
				unnamed++ // the winner had not written its note yet
			default:
				t.Errorf("round %d: a loser names pid %d, the winner is %d", round, pid, winner)
			}
		}
		if unnamed > 0 {
			t.Logf("round %d: %d losers could not name the holder", round, unnamed)
		}
		for _, c := range kids {
			c.stdin.Close()
			if err := c.cmd.Wait(); err != nil {
				t.Fatalf("round %d: child %v", round, err)
			}
		}
	}
}

func childHold(open func(string) (checkpoint.Backend, error)) error {
	s, id, err := childStore(open)
	if err != nil {
		return err
	}
	if _, err := s.Lock(context.Background(), id, 0); err != nil {
		return err
	}
	fmt.Println("locked")
	select {}
}

// A holder killed with SIGKILL leaves no stale lock: the next run gets it
// at once.
func testKilledHolder(t *testing.T, h Harness) {
	home := h.Shared(t)
	s, err := h.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = h.childEnv(home, "k", "TEAMRUN_STORETEST_CHILD=hold")
	cmd.Stderr = os.Stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("child said %q", line)
	}
	_, err = s.Lock(context.Background(), "k", 0)
	var he *checkpoint.HeldError
	if !errors.As(err, &he) || he.PID != cmd.Process.Pid {
		t.Fatalf("while the child holds it: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	l, err := s.Lock(context.Background(), "k", 0)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}

// testPruneKilledBeforeWrite: a run killed (SIGKILL) after it took a new
// session's lock and before it wrote the session leaves its lock behind
// with no session. Prune leaves it while it is younger than the cut-off,
// a dry run only reports it, and prune removes it, leaving nothing of the
// id, and audits the removal; the id can be locked again after.
func testPruneKilledBeforeWrite(t *testing.T, h Harness) {
	home := h.Shared(t)
	s, err := h.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "killed-starting"
	cmd := exec.Command(os.Args[0])
	cmd.Env = h.childEnv(home, id, "TEAMRUN_STORETEST_CHILD=hold")
	cmd.Stderr = os.Stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("child said %q", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	orphans, err := s.OrphanLocks(bg)
	if err != nil || len(orphans) != 1 || orphans[0].ID != id {
		t.Fatalf("OrphanLocks after the kill = %+v, %v; want %s", orphans, err, id)
	}
	// The server drops a killed client's locks once it sees its socket
	// close: a moment after the kill.
	for i := 0; ; i++ {
		held, err := s.Held(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if held == nil {
			break
		}
		if i == 200 {
			t.Fatalf("the killed child still holds %s: %v", id, held)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := s.Project(t.TempDir())
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, opts := range []checkpoint.PruneOptions{{Before: past}, {Before: future, DryRun: true}} {
		stale, _, err := checkpoint.Prune(bg, s, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		st, ok := lockStale(stale, id)
		if opts.DryRun != ok || (ok && (!st.Removed || !st.Touched.Before(future))) {
			t.Errorf("prune %+v: %+v", opts, stale)
		}
		if orphans, err := s.OrphanLocks(bg); len(orphans) != 1 || err != nil {
			t.Errorf("prune %+v removed the lock: %+v, %v", opts, orphans, err)
		}
	}
	stale, _, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: future})
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := lockStale(stale, id); !ok || !st.Removed || len(stale) != 1 {
		t.Errorf("prune: %+v", stale)
	}
	if orphans, err := s.OrphanLocks(bg); len(orphans) != 0 || err != nil {
		t.Errorf("OrphanLocks after prune = %+v, %v", orphans, err)
	}
	if h.Leftovers != nil {
		if left := h.Leftovers(t, s, id); len(left) > 0 {
			t.Errorf("prune left %q", left)
		}
	}
	recs, err := p.AuditRecords(bg)
	if err != nil || len(recs) != 1 || recs[0].Event != checkpoint.EventPruned || recs[0].Session != id ||
		!strings.Contains(recs[0].Detail, "a lock with no session") {
		t.Errorf("audit records after prune = %+v, %v", recs, err)
	}
	if ok, err := s.Exists(bg, id); ok || err != nil {
		t.Errorf("Exists(%s) after prune = %v, %v", id, ok, err)
	}
	l, err := s.Lock(bg, id, 0)
	if err != nil {
		t.Fatalf("Lock(%s) after prune: %v", id, err)
	}
	l.Release()
}

// childClaim claims the project's active session at an agreed instant and
// prints what is active after it.
func childClaim(open func(string) (checkpoint.Backend, error)) error {
	s, id, err := childStore(open)
	if err != nil {
		return err
	}
	defer s.Close()
	p := s.Project(os.Getenv("TEAMRUN_STORETEST_DIR"))
	at, _ := strconv.ParseInt(os.Getenv("TEAMRUN_STORETEST_AT"), 10, 64)
	time.Sleep(time.Until(time.Unix(0, at)))
	// As a run starts the project's session: locked, written, claimed; a
	// run that loses the claim discards what it made.
	l, err := s.Lock(context.Background(), id, 0)
	if err != nil {
		return err
	}
	j, err := s.Begin(context.Background(), l, newSession(id, defs(1)))
	if err != nil {
		return err
	}
	got, err := p.ClaimActive(context.Background(), "", id)
	if err != nil {
		return err
	}
	if err := j.Close(); err != nil {
		return err
	}
	if got != id {
		err = s.Discard(context.Background(), l)
	} else {
		err = l.Release()
	}
	if err != nil {
		return err
	}
	fmt.Println(got)
	return nil
}

// testClaimRace: 10 processes, each holding a session it has written,
// claim one project's active session at the same instant; exactly one sets
// it and every one reads that one; the winner's session is there, the
// losers leave nothing of theirs.
func testClaimRace(t *testing.T, h Harness) {
	home, dir := h.Shared(t), t.TempDir()
	at := time.Now().Add(time.Second).UnixNano()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < 10; i++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = h.childEnv(home, fmt.Sprintf("claim-%d", i), "TEAMRUN_STORETEST_CHILD=claim",
			"TEAMRUN_STORETEST_DIR="+dir, fmt.Sprintf("TEAMRUN_STORETEST_AT=%d", at))
		cmd.Stderr = os.Stderr
		out := &strings.Builder{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var got []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		got = append(got, strings.TrimSpace(outs[i].String()))
	}
	winners := 0
	for i, g := range got {
		if g != got[0] {
			t.Errorf("the children read different active sessions: %q", got)
		}
		if g == fmt.Sprintf("claim-%d", i) {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d children set the active session: %q", winners, got)
	}
	s, err := h.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := s.Exists(bg, got[0]); !ok || err != nil {
		t.Errorf("the winner's session %s: Exists = %v, %v", got[0], ok, err)
	}
	if h.Leftovers == nil {
		return
	}
	for i := range got {
		if id := fmt.Sprintf("claim-%d", i); id != got[0] {
			if left := h.Leftovers(t, s, id); len(left) > 0 {
				t.Errorf("%s lost the claim and left %q", id, left)
			}
		}
	}
}
