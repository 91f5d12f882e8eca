package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/tools"
)

// stderrTail is how much of a failed command's stderr goes into its error.
const stderrTail = 2048

// outputGrace is how long the stderr of a command that has ended is still
// read once its process group is dead. Only a process that left the group
// (setsid) and teamrun's reach can hold it open longer; its output is not
// the task's.
const outputGrace = 2 * time.Second

// CommandSpec is one attempt of a command agent, ready to start.
type CommandSpec struct {
	Shell string   // run by /bin/sh -c when set
	Argv  []string // run directly otherwise
	Stdin string
	Env   []string // added to the runner's own environment
	// Inherited is the runner's own environment (inheritedEnv's), read
	// once for many commands; nil: read for this one.
	Inherited []string
	Dir       string
	Timeout   time.Duration // 0: none
	// Spool is the folder of the file stdout goes to, unlinked at once;
	// "" means os.TempDir().
	Spool string
	// Owner are entries of Env that every process the command starts
	// carries unless it clears its environment: what tells, among the
	// processes teamrun adopted as subreaper, the ones of this command.
	Owner []string
	// Stdout and Stderr, when set, get a copy of the output as it comes
	// (the attempt's logs, --verbose).
	Stdout, Stderr io.Writer
	// StdoutLimit reads at most this many bytes of stdout (0: all), kept
	// in memory, the rest drained and dropped: a chatty tool's output
	// costs neither memory nor disk, and a full disk does not cut it.
	StdoutLimit int
	// copyByGoroutines copies stdout and stderr with a goroutine each, as
	// systems without drain do (for tests of that path).
	copyByGoroutines bool
	// Paths, when set, remembers where PATH had the commands run so far.
	Paths *pathCache
	// Large, when set, takes a successful command's stdout over
	// checkpoint.BlobThreshold from the spool file, instead of memory;
	// RunCommand then returns "". Its error stops the run (StoreError).
	Large func(r io.Reader) error
}

// SpoolError is a command's stdout that teamrun could not keep (a full
// disk, a scratch folder gone): the command did its work, teamrun could
// not take it.
type SpoolError struct {
	Dir string
	Err error
}

func (e *SpoolError) Error() string {
	return fmt.Sprintf("cannot keep the command's output in %s: %v", e.Dir, e.Err)
}

func (e *SpoolError) Unwrap() error { return e.Err }

// CommandError is a failed attempt of a command agent.
type CommandError struct {
	ExitCode int // -1 when killed by a signal or not started
	TimedOut bool
	Timeout  time.Duration
	// TimeoutKey is where the timeout is set (tasks.NAME.timeout), for
	// the message; "" when unknown.
	TimeoutKey string
	Stderr     string // the tail of stderr, trimmed
	Err        error  // the underlying error
}

func (e *CommandError) Error() string {
	var b strings.Builder
	switch {
	case e.TimedOut && e.TimeoutKey != "":
		fmt.Fprintf(&b, "timed out after %s (%s)", e.Timeout, e.TimeoutKey)
	case e.TimedOut:
		fmt.Fprintf(&b, "timed out after %s", e.Timeout)
	case e.ExitCode >= 0:
		fmt.Fprintf(&b, "exit status %d", e.ExitCode)
	default:
		b.WriteString(e.Err.Error())
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

// Groups tracks the process groups of running commands so that an
// interrupt, even one that ends the process at once, leaves no orphans.
// Once Subreap is called, it also kills, when a command ends, the
// processes it left outside its group (setsid).
type Groups struct {
	mu   sync.Mutex
	pgid map[int]struct{}
	// held counts processes being started outside RunCommand (MCP
	// servers: forked deep in a client's Connect, registered only once it
	// returns); no sweep runs meanwhile, as one could take such a server
	// for an adopted process.
	held int

	// start is held shared from a command's fork to its registration in
	// pgid, and exclusively by a sweep of adopted processes: a sweep never
	// sees a command RunCommand (or os/exec, an MCP server) has started
	// but pgid does not name yet, so it never reaps (waits for) a process
	// another wait is for.
	start     sync.RWMutex
	subreaper bool
	// stop ends the recorder (Subreap); done says it has.
	stop, done chan struct{}
	// rec is the record of the tasks' processes (Subreap); nil: none.
	rec *procsFile
}

// procsFile is the file a run writes its tasks' processes down in, for the
// next run of the session after a kill -9 (killOrphans). It is opened once,
// when first written, and appended to by the recorder and by each start.
type procsFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// write appends b. What reached the file survives a kill -9 of teamrun
// (a crash of the machine ends the tasks as well): no sync is needed.
func (r *procsFile) write(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		if err := makePrivateDir(filepath.Dir(r.path)); err != nil {
			return err
		}
		f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		r.f = f
	}
	_, err := r.f.Write(b)
	return err
}

func (r *procsFile) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// Subreap makes teamrun the subreaper of the commands' processes (Linux;
// elsewhere nothing): a process whose parent ends is adopted by teamrun,
// and killed when its command ends, even if it left the command's process
// group and session. Every child of teamrun that is not a running command
// then counts as an adopted process, so only the teamrun process, which
// starts no other, should call it. Close undoes it.
//
// While commands run, the processes below teamrun are written down in the
// file record (when not ""), every recordEvery, and each command's process
// group as it starts, so that the next run of the session can kill them
// after a kill -9 of teamrun (killOrphans).
func (g *Groups) Subreap(record string) error {
	if err := setSubreaper(true); err != nil {
		return fmt.Errorf("cannot become the subreaper of the tasks: %w", err)
	}
	g.start.Lock()
	g.subreaper = true
	g.start.Unlock()
	if record != "" {
		g.rec = &procsFile{path: record}
		g.stop, g.done = make(chan struct{}), make(chan struct{})
		go g.record()
	}
	return nil
}

// record writes down the processes below teamrun while commands run. A
// failure to write is no reason to stop the run: only the sweep after a
// kill -9 loses what it would have found.
func (g *Groups) record() {
	defer close(g.done)
	seen := map[int]uint64{}
	t := time.NewTicker(recordEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		g.mu.Lock()
		running := len(g.pgid) > 0
		g.mu.Unlock()
		if running {
			_ = recordDescendants(g.rec, seen)
		}
	}
}

// recordStart writes down the command that has just started as pid, the
// leader of its process group: before the recorder's next tick, a kill -9
// of teamrun (which kills the leader) leaves the rest of the group, and
// what in it cleared its environment is found by nothing else.
func (g *Groups) recordStart(pid int) {
	if g.rec == nil {
		return
	}
	if line := processLine(pid); line != nil {
		_ = g.rec.write(line)
	}
}

// Close kills whatever adopted process is left, then stops being the
// subreaper.
func (g *Groups) Close() {
	if g == nil || !g.subreaperOn() {
		return
	}
	if g.stop != nil {
		close(g.stop)
		<-g.done
		g.rec.close()
	}
	g.sweep(nil)
	g.start.Lock()
	g.subreaper = false
	g.start.Unlock()
	_ = setSubreaper(false)
}

func (g *Groups) subreaperOn() bool {
	g.start.RLock()
	defer g.start.RUnlock()
	return g.subreaper
}

// sweep kills the adopted processes of the command whose owner entries are
// given, and, once no command runs, every adopted process: one that
// cleared its environment can be told from no other command's.
func (g *Groups) sweep(owner []string) {
	if g == nil {
		return
	}
	g.start.Lock()
	defer g.start.Unlock()
	if !g.subreaper {
		return
	}
	g.mu.Lock()
	held := g.held > 0
	running := make(map[int]bool, len(g.pgid))
	for pid := range g.pgid {
		running[pid] = true
	}
	g.mu.Unlock()
	if held {
		return // the next sweep, or Close's, finds what this one would have
	}
	sweepAdopted(owner, running, len(running) == 0)
}

// hold keeps sweeps off while n processes are started outside RunCommand
// (n < 0 releases): they are children of teamrun that Groups does not
// know yet.
func (g *Groups) hold(n int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.held += n
	g.mu.Unlock()
}

func (g *Groups) startLock() {
	if g != nil {
		g.start.RLock()
	}
}

func (g *Groups) startUnlock() {
	if g != nil {
		g.start.RUnlock()
	}
}

func (g *Groups) add(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pgid == nil {
		g.pgid = make(map[int]struct{})
	}
	g.pgid[pid] = struct{}{}
}

func (g *Groups) remove(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pgid, pid)
}

// KillAll sends SIGKILL to every running command's process group.
func (g *Groups) KillAll() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for pid := range g.pgid {
		_ = killGroup(pid)
	}
}

// RunCommand runs one attempt of a command agent in its own process group
// and returns its stdout. A timeout or a cancelled ctx kills the whole
// group; a non-zero exit is a *CommandError carrying the tail of stderr.
func RunCommand(ctx context.Context, groups *Groups, cs CommandSpec) (string, error) {
	parent := ctx
	if cs.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cs.Timeout)
		defer cancel()
	}
	var name string
	var args []string
	switch {
	case cs.Shell != "":
		if argv, ok := simpleCommand(cs.Paths, cs.Shell); ok {
			name, args = argv[0], argv[1:]
		} else {
			name, args = "/bin/sh", []string{"-c", cs.Shell}
		}
	case len(cs.Argv) > 0:
		name, args = cs.Argv[0], cs.Argv[1:]
	default:
		return "", &CommandError{ExitCode: -1, Err: errors.New("the agent has neither shell nor command")}
	}
	env, err := commandEnv(cs.Inherited, cs.Env, cs.Dir)
	if err != nil {
		return "", &CommandError{ExitCode: -1, Err: fmt.Errorf("command %q did not start: %w", name, err)}
	}
	// The pipes are ours, read by drain or copy: os/exec's Wait would wait
	// for every holder of the stderr it copies, so a background child
	// (`sleep 7 & echo hi`) would keep the task running after its command
	// ended. Here the wait returns when the command exits; then its group is killed and
	// stderr read to the end. stdout goes to a file (past a short output,
	// when it is copied as it comes), not into a growing buffer: read once,
	// when the command has ended, into a string of its size, the output is
	// in memory once, however large (a growing buffer would hold up to
	// twice its size, and a copy of that as the result).
	stdout := &stdoutSpool{dir: cs.Spool, limit: cs.StdoutLimit}
	defer stdout.close()
	// Read through a pipe when it is copied as it comes, or kept only so
	// far: else the command writes into the spool file itself.
	piped := cs.Stdout != nil || cs.StdoutLimit > 0
	if !piped {
		if err := stdout.direct(); err != nil {
			return "", &CommandError{ExitCode: -1, Err: fmt.Errorf("cannot create the file for the command's output: %w", err)}
		}
	}
	p, err := newPipes(cs.Stdin, piped, !cs.copyByGoroutines)
	if err != nil {
		return "", &CommandError{ExitCode: -1, Err: fmt.Errorf("cannot create the command's pipes: %w", err)}
	}
	childStdout := stdout.f
	if p.stdoutW != nil {
		// A copy as it comes (logs, --verbose), or a limit: through a
		// pipe of ours, drained like stderr, into the spool and the copy.
		childStdout = p.stdoutW
	}
	cmd := &process{name: name, argv: append([]string{name}, args...), attr: os.ProcAttr{
		Dir: cs.Dir, Env: env, Sys: procAttr(),
		Files: []*os.File{p.stdinR, childStdout, p.stderrW},
	}}
	stderr := &tools.Tail{Max: stderrTail}

	groups.startLock()
	if err = ctx.Err(); err == nil {
		err = cmd.start(cs.Paths)
		if fserr.Of(err) == fserr.NotExist && !strings.Contains(name, "/") {
			// Gone from where PATH had it earlier in the run?
			cs.Paths.forget(name)
			err = cmd.start(cs.Paths)
		}
	}
	p.closeChildEnds()
	if err != nil {
		groups.startUnlock()
		p.closeOurEnds()
		return "", &CommandError{ExitCode: -1, Err: startError(cmd, err)}
	}
	pid := cmd.proc.Pid
	groups.addIfSet(pid)
	groups.startUnlock()
	// A timeout or a cancelled run kills the whole group; should that
	// fail, the leader itself. (exec.CommandContext would do this from a
	// goroutine of its own per command.)
	stopKill := context.AfterFunc(ctx, func() {
		if killGroup(pid) != nil {
			_ = cmd.proc.Kill()
		}
	})
	// ended follows the leader's end (Wait's err).
	ended := func(err error) error {
		if !stopKill() && err == nil {
			err = ctx.Err() // killed, yet it exited 0: it did not finish
		}
		// Whatever the command left behind in its group dies with it:
		// nothing of a task outlives the task, and no leftover holds its
		// output open.
		killLeftovers(pid)
		groups.removeIfSet(pid)
		// And what left the group, adopted by teamrun as its parent ended.
		groups.sweep(cs.Owner)
		return err
	}
	outW, errW := multi(stdout, cs.Stdout), multi(stderr, cs.Stderr)
	pidfd := -1
	if p.drained() {
		if pidfd, err = openPidfd(pid); err != nil {
			p.undrain()
		}
	}
	copied := p.copy(cs.Stdin, outW, errW)
	if p.drained() {
		err = drain(pidfd, cmd, p.outFd, p.errFd, outW, errW, outputGrace, ended)
	} else {
		err = ended(cmd.wait())
	}
	p.finish(copied, outputGrace)
	if err == nil && stdout.err != nil {
		return "", &SpoolError{Dir: spoolDir(cs.Spool), Err: stdout.err}
	}
	if err == nil && cs.Large != nil && cs.StdoutLimit == 0 {
		if n, serr := stdout.size(); serr == nil && n > checkpoint.BlobThreshold {
			if lerr := cs.Large(stdout.reader(n)); lerr != nil {
				return "", &StoreError{Err: lerr, Ended: true}
			}
			return "", nil
		}
	}
	var out string
	var rerr error
	// A failed command agent's stdout is nobody's result: it stays in its
	// file (and its log), not in memory.
	if err == nil || cs.Large == nil {
		out, rerr = stdout.text(cs.StdoutLimit)
	}
	if err == nil && rerr != nil {
		return "", &CommandError{ExitCode: -1, Err: fmt.Errorf("cannot read the command's output: %w", rerr)}
	}
	if err == nil {
		return out, nil
	}
	ce := &CommandError{ExitCode: -1, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		ce.ExitCode = ee.ExitCode()
	}
	switch {
	case ctx.Err() != nil && parent.Err() == nil:
		ce.TimedOut, ce.Timeout = true, cs.Timeout
		ce.Err = context.DeadlineExceeded
	case ctx.Err() != nil:
		ce.Err = ctx.Err()
	}
	return out, ce
}

// namedSpool is a file for a command's stdout, already unlinked where the
// system allows it: nothing is left behind, even by a kill -9.
func namedSpool(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "teamrun-stdout-")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// spoolDir is the folder spool files go to: dir, or os.TempDir() for "".
func spoolDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// readSpool reads what the command wrote to f, from the start, into a
// string allocated once at its size; at most limit bytes when limit > 0.
func readSpool(f *os.File, limit int) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := fi.Size()
	if limit > 0 && size > int64(limit) {
		size = int64(limit)
	}
	if size == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(int(size))
	// io.Copy would allocate 32 KiB per task, whatever the output's size.
	_, err = io.CopyBuffer(&b, onlyReader{io.NewSectionReader(f, 0, size)}, make([]byte, min(size, copyBuf)))
	return b.String(), err
}

// copyBuf bounds the buffers that move a command's output: io.Copy's own
// is 32 KiB per call, three calls per task, almost always for a few bytes.
const copyBuf = 8 << 10

// onlyReader hides a file's WriteTo, through which io.CopyBuffer would
// ignore the buffer it is given and allocate 32 KiB of its own.
type onlyReader struct{ io.Reader }

// startError says why a command did not start in the user's terms, not
// exec's ("exec: \"x\": executable file not found in $PATH"); the cause
// stays reachable with errors.Is. The file system's causes are sorted as
// everywhere else (fserr).
func startError(cmd *process, err error) error {
	name := cmd.name
	var msg string
	switch kind := fserr.Of(err); {
	case errors.Is(err, exec.ErrNotFound):
		msg = fmt.Sprintf("command %q is not in PATH: install it, or give its full path", name)
	case kind == fserr.NotExist && cmd.attr.Dir != "":
		msg = fmt.Sprintf("command %q or the folder %s does not exist: check the agent's command", name, cmd.attr.Dir)
	case kind == fserr.NotExist:
		msg = fmt.Sprintf("command %q does not exist: check the agent's command", name)
	case kind == fserr.Permission:
		msg = fmt.Sprintf("command %q cannot be run (permission denied): make it executable (chmod +x)", name)
	default:
		return fmt.Errorf("command %q did not start: %w", name, err)
	}
	return &startErr{msg: msg, err: err}
}

type startErr struct {
	msg string
	err error
}

func (e *startErr) Error() string { return e.msg }
func (e *startErr) Unwrap() error { return e.err }

// pipes are a command's stdin, stderr and, when it is copied as it comes,
// stdout. The child's ends are closed in teamrun once it has started, so
// that EOF on stderr means every process holding it has ended. teamrun's
// ends of stdout and stderr are either *os.File read by a goroutine each
// (copy) or bare descriptors that drain reads (outFd, errFd: -1 unused).
type pipes struct {
	stdinR, stdinW   *os.File // stdinW is nil once a short stdin is written
	stderrR, stderrW *os.File
	stdoutR, stdoutW *os.File
	outFd, errFd     int
}

// newPipes makes the pipes, for drain when drained is set (and the system
// has it).
func newPipes(stdin string, stdout, drained bool) (*pipes, error) {
	p := pipes{outFd: -1, errFd: -1}
	var err error
	short := len(stdin) <= shortStdin
	if p.stdinR, p.stdinW, err = childPipe(true, !short); err != nil {
		return nil, err
	}
	if short {
		_, err = io.WriteString(p.stdinW, stdin)
		p.stdinW.Close()
		p.stdinW = nil
		if err != nil {
			p.stdinR.Close()
			return nil, err
		}
	}
	stream := func() (child, ours *os.File, fd int, err error) {
		if drained {
			if child, fd, err = drainPipe(); err == nil {
				return child, nil, fd, nil
			}
		}
		child, ours, err = childPipe(false, true)
		return child, ours, -1, err
	}
	if p.stderrW, p.stderrR, p.errFd, err = stream(); err != nil {
		p.closeChildEnds()
		p.closeOurEnds()
		return nil, err
	}
	if stdout {
		if p.stdoutW, p.stdoutR, p.outFd, err = stream(); err != nil {
			p.closeChildEnds()
			p.closeOurEnds()
			return nil, err
		}
	}
	return &p, nil
}

// drained tells whether drain is to read stdout and stderr.
func (p *pipes) drained() bool { return p.errFd >= 0 }

// undrain gives the bare descriptors to Go's poller, for copy.
func (p *pipes) undrain() {
	if p.errFd >= 0 {
		p.stderrR, p.errFd = os.NewFile(uintptr(p.errFd), "|teamrun"), -1
	}
	if p.outFd >= 0 {
		p.stdoutR, p.outFd = os.NewFile(uintptr(p.outFd), "|teamrun"), -1
	}
}

func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.stdinR, p.stderrW, p.stdoutW} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeOurEnds() {
	for _, f := range []*os.File{p.stdinW, p.stderrR, p.stdoutR} {
		if f != nil {
			f.Close()
		}
	}
	for _, fd := range []*int{&p.errFd, &p.outFd} {
		if *fd >= 0 {
			closeFd(*fd)
			*fd = -1
		}
	}
}

// copy feeds a long stdin and drains stderr and stdout where they are
// *os.File ends; the channel closes when all are done, by the last copy
// to end (at once when there is none).
func (p *pipes) copy(stdin string, stdout, stderr io.Writer) <-chan struct{} {
	done := make(chan struct{})
	var left atomic.Int32
	left.Store(1)
	end := func() {
		if left.Add(-1) == 0 {
			close(done)
		}
	}
	for _, s := range []struct {
		r *os.File
		w io.Writer
	}{{p.stdoutR, stdout}, {p.stderrR, stderr}} {
		if s.r != nil {
			left.Add(1)
			go func() {
				defer end()
				_, _ = io.CopyBuffer(s.w, onlyReader{s.r}, make([]byte, copyBuf))
			}()
		}
	}
	if p.stdinW != nil {
		left.Add(1)
		go func() {
			defer end()
			// A command need not read all its input: EPIPE is no failure.
			_, _ = io.WriteString(p.stdinW, stdin)
			p.stdinW.Close()
		}()
	}
	end()
	return done
}

// finish waits for the copies after the command's group is dead, at most
// grace, then closes teamrun's ends, which ends any copy still blocked.
func (p *pipes) finish(done <-chan struct{}, grace time.Duration) {
	// Nobody in the group is left to read stdin.
	if p.stdinW != nil {
		p.stdinW.Close()
	}
	select {
	case <-done:
		p.closeOurEnds()
		return
	default:
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	p.closeOurEnds()
	<-done
}

func (g *Groups) addIfSet(pid int) {
	if g != nil {
		g.add(pid)
		g.recordStart(pid)
	}
}

func (g *Groups) removeIfSet(pid int) {
	if g != nil {
		g.remove(pid)
	}
}

// shellBuiltins are names a shell runs itself, differently from a program
// of the same name or with an effect on the shell; such lines keep the
// shell.
var shellBuiltins = map[string]bool{
	"alias": true, "bg": true, "break": true, "cd": true, "command": true, "continue": true,
	"echo": true, "eval": true, "exec": true, "exit": true, "export": true, "fc": true,
	"fg": true, "getopts": true, "hash": true, "jobs": true, "kill": true, "local": true,
	"printf": true, "pwd": true, "read": true, "readonly": true, "return": true, "set": true,
	"shift": true, "test": true, "times": true, "trap": true, "type": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true,
}

// simpleCommand returns the argv of a shell line that /bin/sh would run as
// one program with literal arguments: words of plain characters split by
// blanks, the first neither an assignment nor a builtin, and found in PATH.
// Such a line skips the shell, as make does, which saves a shell start per
// task; anything else (quotes, $, globs, redirections, ;, |, newlines, …)
// goes to /bin/sh -c.
func simpleCommand(paths *pathCache, line string) ([]string, bool) {
	for _, r := range line {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(" \t-_./,:+@%=", r):
		default:
			return nil, false
		}
	}
	words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(words) == 0 || strings.Contains(words[0], "=") || shellBuiltins[words[0]] {
		return nil, false
	}
	if _, err := paths.look(words[0]); err != nil {
		return nil, false // let the shell say "not found", as users know it
	}
	return words, true
}
