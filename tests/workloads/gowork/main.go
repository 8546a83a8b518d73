// SPDX-License-Identifier: MIT

// gowork: goroutine handoffs a tracer of the Go runtime must see, each
// made a fact by the program rather than a likelihood, with its own ground
// truth (tests/live/go.sh). Standard library only. Phases, one after the
// other, each between two phase lines of the truth:
//
//	pingpong  under GOMAXPROCS=1, main.pinger and main.ponger exchange N
//	          messages each way over two unbuffered channels. Every send is
//	          non-blocking (select with default) and retried after
//	          runtime.Gosched() until it succeeds. A non-blocking send on an
//	          unbuffered channel succeeds only when a receiver is parked in
//	          the channel's recvq, and then hands it the value and readies it
//	          (runtime.chansend -> send -> goready); a sender never parks, so
//	          a receiver never finds a parked sender and always parks itself
//	          in its receive (reason "chan receive"). So each of the 2N
//	          messages is exactly one wake from its sender to its parked
//	          receiver, N each way, and none else passes between the two
//	          (Gosched parks nothing: the goroutine goes to the global run
//	          queue, no ready). One P keeps the retries few: a receiver
//	          that is not parked yet runs on that P as soon as the sender
//	          yields it.
//	spawn     main.spawner starts K goroutines of main.spawned and K of a
//	          closure (main.spawner.func1), each of which records its goid
//	          and exits; the spawner waits for them all.
//	sleep     main.sleeper sleeps S times (time.Sleep): each sleep is one
//	          park (reason "sleep") ended by its timer, run by the scheduler.
//	mutex     main.holder holds a sync.Mutex while main.waiter blocks in
//	          Lock, and unlocks it only once the runtime reports the waiter
//	          parked (its goroutine's status in runtime.Stack, "semacquire"
//	          before Go 1.20, "sync.Mutex.Lock" after): each of M rounds is
//	          then one wake from holder to waiter by the Unlock.
//	http      a server on 127.0.0.1:0; its handler for /item/N hands a job
//	          to a pool of W main.worker goroutines over an unbuffered
//	          channel, non-blocking and retried as in pingpong (so the job
//	          always readies a parked worker: the wake that carries the
//	          request), and waits for the reply on the job's own channel;
//	          the worker runs main.burn for BURN of wall time by the
//	          monotonic clock. A client in the same process (below) issues R
//	          requests GET /item/0 .. /item/R-1, one after the other, over
//	          one keep-alive connection.
//
// GC is off from pingpong to mutex (debug.SetGCPercent(-1), which returns
// once no GC runs): a goroutine that allocates could otherwise park for a
// GC assist and be readied by a GC worker, a wake the counts above do not
// hold. It is back on for http, whose checks do not count wakes.
//
// The client is in the server's process: one process, one pid scope and
// one truth, and the test depends only on attaching to the program it
// starts, not on a Go binary exec'd during the capture. The client's
// goroutines (net/http's transport: persistConn.readLoop, writeLoop) start
// from functions of their own and never call serverHandler.ServeHTTP, so
// they can make no request node and take no sample in main.burn.
//
// Go statements name their function with no arguments (globals carry the
// data): from Go 1.17 a go statement with arguments starts a compiler
// wrapper closure, and the goroutine's start function would be that
// wrapper, not main.worker.
//
//	gowork -truth FILE [-n N] [-k K] [-s S] [-m M] [-r R] [-w W] [-burn D]
//
// Nothing is written to stdout; the truth goes to FILE at the end. Times
// are CLOCK_MONOTONIC ns, the capture's clock (read by clock_gettime, as
// Go's time.Now keeps its monotonic reading relative to the process's
// start). goids are read from the "goroutine N [" header of
// runtime.Stack, once per goroutine; function names are the runtime's
// (runtime.FuncForPC of the go statement's function value, the PC the
// runtime starts the goroutine at), cross-checked against the outermost
// frame of the goroutine's own traceback. Lines:
//
//	pid PID
//	go VERSION                          runtime.Version()
//	phase NAME T0 T1                    pingpong, spawn, sleep, mutex, http
//	task ROLE GOID FUNC                 a goroutine of ours: ROLE pinger,
//	                                    ponger, spawner, sleeper, holder,
//	                                    waiter, worker (FUNC its start
//	                                    function)
//	pingpong N RETRIES                  N messages each way; RETRIES sends
//	                                    that found no parked receiver
//	spawn PARENT_GOID ROLE GOID FUNC    one per goroutine the spawner started:
//	                                    ROLE spawned or closure, FUNC its
//	                                    start function
//	sleep I T0 T1                       sleeper's I-th sleep, around the call
//	mutex I T_UNLOCK T_LOCKED           round I: holder's Unlock (the waiter
//	                                    seen parked before it), waiter's
//	                                    return from Lock
//	http PORT WORKERS BURN_NS
//	request I METHOD PATH T0 T1 HANDLER_GOID WORKER_GOID B0 B1 RETRIES
//	                                    client's call from T0 to T1 (the
//	                                    body read), served by goroutine
//	                                    HANDLER_GOID, which handed it to
//	                                    WORKER_GOID; main.burn from B0 to
//	                                    B1; RETRIES handoffs that found no
//	                                    parked worker
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// monoNs reads CLOCK_MONOTONIC. RawSyscall: clock_gettime never blocks,
// and the runtime need not hand the P off around it.
func monoNs() int64 {
	var ts syscall.Timespec
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		die("clock_gettime: %v", e)
	}
	return ts.Sec*1e9 + ts.Nsec
}

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gowork: "+format+"\n", args...)
	os.Exit(1)
}

// goid and the outermost function of the calling goroutine, from its own
// traceback: "goroutine 18 [running]:\nmain.f()\n\tfile:line +0x..\n...
// created by ...". The outermost frame is the last before "created by".
func self() (int64, string) {
	var buf [8192]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	rest := strings.TrimPrefix(s, "goroutine ")
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 || rest == s {
		die("unexpected runtime.Stack header: %.40q", s)
	}
	id, err := strconv.ParseInt(rest[:sp], 10, 64)
	if err != nil {
		die("unexpected runtime.Stack header: %.40q", s)
	}
	outer := ""
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "created by ") {
			break
		}
		if l != "" && !strings.HasPrefix(l, "\t") {
			outer = l
		}
	}
	if p := strings.LastIndexByte(outer, '('); p > 0 {
		outer = outer[:p]
	}
	if len(s) == len(buf) {
		outer = "" // truncated: the outermost frame is not in it
	}
	return id, outer
}

// A goroutine of ours, for the truth.
type task struct {
	role string
	goid int64
	fn   string
}

var (
	tasksMu sync.Mutex
	tasks   []task
)

// register records the calling goroutine, started by a go statement of
// fn: its name is what the runtime's symbol table says for fn's PC, and
// the goroutine's own traceback must agree.
func register(role string, fn interface{}) int64 {
	id, outer := self()
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	if outer != name {
		die("%s: started by %s, but its traceback's outermost frame is %q", role, name, outer)
	}
	tasksMu.Lock()
	tasks = append(tasks, task{role, id, name})
	tasksMu.Unlock()
	return id
}

// trySend: a send that succeeds only into a parked receiver.
func trySend(c chan int, v int) bool {
	select {
	case c <- v:
		return true
	default:
		return false
	}
}

// ---- pingpong ----

var (
	ppN        int
	ping, pong chan int
	ppRetries  [2]int
	ppDone     = make(chan struct{}, 2)
)

func pinger() {
	register("pinger", pinger)
	for i := 0; i < ppN; i++ {
		for !trySend(ping, i) {
			ppRetries[0]++
			runtime.Gosched()
		}
		if <-pong != i {
			die("pinger: pong out of order")
		}
	}
	ppDone <- struct{}{}
}

func ponger() {
	register("ponger", ponger)
	for i := 0; i < ppN; i++ {
		if <-ping != i {
			die("ponger: ping out of order")
		}
		for !trySend(pong, i) {
			ppRetries[1]++
			runtime.Gosched()
		}
	}
	ppDone <- struct{}{}
}

func pingPong(n int) {
	ppN = n
	ping, pong = make(chan int), make(chan int)
	prev := runtime.GOMAXPROCS(1)
	go pinger()
	go ponger()
	<-ppDone
	<-ppDone
	runtime.GOMAXPROCS(prev)
}

// ---- spawn ----

type child struct {
	role, outer string
	goid        int64
}

var (
	spawnK      int
	spawnWG     sync.WaitGroup
	spawnMu     sync.Mutex
	spawnParent int64
	children    []child
	spawnFn     map[string]string
	spawnDone   = make(chan struct{})
)

func spawned() {
	id, outer := self()
	spawnMu.Lock()
	children = append(children, child{"spawned", outer, id})
	spawnMu.Unlock()
	spawnWG.Done()
}

func spawner() {
	spawnParent = register("spawner", spawner)
	closure := func() {
		id, outer := self()
		spawnMu.Lock()
		children = append(children, child{"closure", outer, id})
		spawnMu.Unlock()
		spawnWG.Done()
	}
	spawnWG.Add(2 * spawnK)
	for i := 0; i < spawnK; i++ {
		go spawned()
		go closure()
	}
	spawnWG.Wait()
	// The children's start functions, as register names them.
	spawnFn = map[string]string{
		"spawned": runtime.FuncForPC(reflect.ValueOf(spawned).Pointer()).Name(),
		"closure": runtime.FuncForPC(reflect.ValueOf(closure).Pointer()).Name(),
	}
	for _, c := range children {
		if c.outer != spawnFn[c.role] {
			die("%s: started by %s, but its traceback's outermost frame is %q", c.role, spawnFn[c.role], c.outer)
		}
	}
	close(spawnDone)
}

// ---- sleep ----

var (
	sleepS    int
	sleeps    [][2]int64
	sleepDone = make(chan struct{})
)

func sleeper() {
	register("sleeper", sleeper)
	for i := 0; i < sleepS; i++ {
		t0 := monoNs()
		time.Sleep(2 * time.Millisecond)
		sleeps = append(sleeps, [2]int64{t0, monoNs()})
	}
	close(sleepDone)
}

// ---- mutex ----

var (
	mutexM     int
	mu         sync.Mutex
	waiterGoid = make(chan int64, 1)
	tryLock    = make(chan struct{})
	locked     = make(chan int64)
	rounds     [][2]int64
	mutexDone  = make(chan struct{})
)

// parked: the runtime's word that goroutine id waits in a Lock. One
// runtime.Stack of every goroutine (it stops the world for that).
func parkedInLock(id int64) bool {
	buf := make([]byte, 1<<20)
	s := string(buf[:runtime.Stack(buf, true)])
	h := fmt.Sprintf("goroutine %d [", id)
	i := strings.Index(s, h)
	if i < 0 {
		die("mutex: goroutine %d not in runtime.Stack", id)
	}
	st := s[i+len(h):]
	return strings.HasPrefix(st, "semacquire") || strings.HasPrefix(st, "sync.Mutex.Lock")
}

func holder() {
	register("holder", holder)
	w := <-waiterGoid
	for i := 0; i < mutexM; i++ {
		mu.Lock()
		tryLock <- struct{}{}
		for !parkedInLock(w) {
			time.Sleep(100 * time.Microsecond)
		}
		t := monoNs()
		mu.Unlock()
		rounds = append(rounds, [2]int64{t, <-locked})
	}
	close(mutexDone)
}

func waiter() {
	waiterGoid <- register("waiter", waiter)
	for i := 0; i < mutexM; i++ {
		<-tryLock
		mu.Lock()
		t := monoNs()
		mu.Unlock()
		locked <- t
	}
}

// ---- http ----

type result struct {
	worker, b0, b1 int64
}

type job struct {
	reply chan result
}

type served struct {
	handler, worker, b0, b1 int64
	retries                 int
}

var (
	jobs     = make(chan job)
	burnNs   int64
	servedMu sync.Mutex
	served_  = map[string]served{}
	sink     uint64
)

// burn spins for d ns of wall time by the monotonic clock, in its own
// frame: the samples the test looks for have main.burn in their stack.
//
//go:noinline
func burn(d time.Duration) {
	x := uint64(88172645463325252)
	start := time.Now()
	for time.Since(start) < d {
		for i := 0; i < 4096; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink += x
}

func worker() {
	register("worker", worker)
	for j := range jobs {
		b0 := monoNs()
		burn(time.Duration(burnNs))
		b1 := monoNs()
		id, _ := self()
		j.reply <- result{id, b0, b1}
	}
}

func handle(w http.ResponseWriter, r *http.Request) {
	id, _ := self()
	j := job{make(chan result)}
	retries := 0
	for {
		select {
		case jobs <- j:
		default:
			retries++
			runtime.Gosched()
			continue
		}
		break
	}
	res := <-j.reply
	servedMu.Lock()
	served_[r.URL.Path] = served{id, res.worker, res.b0, res.b1, retries}
	servedMu.Unlock()
	fmt.Fprintf(w, "%s %d\n", r.URL.Path, res.worker)
}

type reqTruth struct {
	path   string
	t0, t1 int64
}

func httpPhase(nreq, nworkers int) (int, []reqTruth) {
	for i := 0; i < nworkers; i++ {
		go worker()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		die("listen: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	mux := http.NewServeMux()
	mux.HandleFunc("/item/", handle)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	var reqs []reqTruth
	for i := 0; i < nreq; i++ {
		path := fmt.Sprintf("/item/%d", i)
		t0 := monoNs()
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err != nil {
			die("GET %s: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		t1 := monoNs()
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(string(body), path+" ") {
			die("GET %s: %v %d %q", path, err, resp.StatusCode, body)
		}
		reqs = append(reqs, reqTruth{path, t0, t1})
	}
	client.CloseIdleConnections()
	srv.Close()
	close(jobs)
	return port, reqs
}

func main() {
	truth := flag.String("truth", "", "ground truth file (required)")
	n := flag.Int("n", 2000, "pingpong messages each way")
	k := flag.Int("k", 20, "goroutines of each spawned function")
	s := flag.Int("s", 5, "sleeps")
	m := flag.Int("m", 5, "mutex rounds")
	r := flag.Int("r", 40, "HTTP requests")
	w := flag.Int("w", 3, "worker goroutines")
	burnD := flag.Duration("burn", 20*time.Millisecond, "main.burn per request")
	gotrace := flag.String("gotrace", "", "also write the runtime's execution trace (runtime/trace) here")
	flag.Parse()
	if *truth == "" || *n < 1 || *k < 1 || *s < 1 || *m < 1 || *r < 1 || *w < 2 {
		fmt.Fprintln(os.Stderr, "usage: gowork -truth FILE [-n N] [-k K] [-s S] [-m M] [-r R] [-w W>=2] [-burn D]")
		os.Exit(2)
	}
	// Created first: a bad path fails before any work.
	out, err := os.Create(*truth)
	if err != nil {
		die("%v", err)
	}
	sleepS, mutexM, spawnK, burnNs = *s, *m, *k, int64(*burnD)
	if *gotrace != "" {
		f, err := os.Create(*gotrace)
		if err != nil {
			die("%v", err)
		}
		if err := trace.Start(f); err != nil {
			die("runtime/trace: %v", err)
		}
		defer func() { trace.Stop(); f.Close() }()
	}

	type phase struct {
		name   string
		t0, t1 int64
	}
	var phases []phase
	run := func(name string, f func()) {
		// a gap between phases: their edges apart in time
		time.Sleep(20 * time.Millisecond)
		t0 := monoNs()
		f()
		phases = append(phases, phase{name, t0, monoNs()})
	}
	gc := debug.SetGCPercent(-1)
	run("pingpong", func() { pingPong(*n) })
	run("spawn", func() { go spawner(); <-spawnDone })
	run("sleep", func() { go sleeper(); <-sleepDone })
	run("mutex", func() { go holder(); go waiter(); <-mutexDone })
	debug.SetGCPercent(gc)
	var port int
	var reqs []reqTruth
	run("http", func() { port, reqs = httpPhase(*r, *w) })

	b := bufio.NewWriter(out)
	fmt.Fprintf(b, "pid %d\ngo %s\n", os.Getpid(), runtime.Version())
	for _, p := range phases {
		fmt.Fprintf(b, "phase %s %d %d\n", p.name, p.t0, p.t1)
	}
	for _, t := range tasks {
		fmt.Fprintf(b, "task %s %d %s\n", t.role, t.goid, t.fn)
	}
	fmt.Fprintf(b, "pingpong %d %d\n", *n, ppRetries[0]+ppRetries[1])
	for _, c := range children {
		fmt.Fprintf(b, "spawn %d %s %d %s\n", spawnParent, c.role, c.goid, spawnFn[c.role])
	}
	for i, x := range sleeps {
		fmt.Fprintf(b, "sleep %d %d %d\n", i, x[0], x[1])
	}
	for i, x := range rounds {
		fmt.Fprintf(b, "mutex %d %d %d\n", i, x[0], x[1])
	}
	fmt.Fprintf(b, "http %d %d %d\n", port, *w, burnNs)
	for i, q := range reqs {
		sv, ok := served_[q.path]
		if !ok {
			die("%s: the handler left no record", q.path)
		}
		fmt.Fprintf(b, "request %d GET %s %d %d %d %d %d %d %d\n", i, q.path, q.t0, q.t1,
			sv.handler, sv.worker, sv.b0, sv.b1, sv.retries)
	}
	if err := b.Flush(); err != nil {
		die("%s: %v", *truth, err)
	}
	if err := out.Close(); err != nil {
		die("%s: %v", *truth, err)
	}
}
