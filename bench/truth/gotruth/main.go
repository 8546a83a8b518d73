// SPDX-License-Identifier: MIT

// gotruth: the Go variant of bench/truth's request pipeline, with its
// ground truth in the truth file format (bench/truth/FORMAT.md). Standard
// library only; what causeway sees of it is the go class (docs/model.md
// §6.2): goroutines, their handoffs, net/http requests.
//
// Per request (GET /r/N, one of C client goroutines in this process, over
// keep-alive connections to the program's own server on 127.0.0.1):
//
//	go_http   serverHandler.ServeHTTP begins the request on the serving
//	          goroutine: a begin edge goroutine -> request node, key the
//	          *http.Request's address (the handler is the Server's Handler
//	          itself, so it gets the pointer ServeHTTP got: no ServeMux,
//	          no query with ';', which makes ServeHTTP copy the request).
//	go_chan   the handler hands a job to one of W worker goroutines over
//	          an unbuffered channel with a non-blocking send, retried
//	          after runtime.Gosched until it succeeds. A non-blocking send
//	          on an unbuffered channel succeeds only into a receiver parked
//	          in the channel's recvq, which it readies (chansend -> send ->
//	          goready), so each job is exactly one wake from the handler's
//	          goroutine into the worker's, whose goid the job brings back.
//	go_spawn  the worker starts a child goroutine (go statement): a spawn
//	          edge worker -> child.
//	go_mutex  the worker locks a per-request sync.Mutex before the spawn;
//	          the child burns CPU, then waits until the runtime reports the
//	          worker parked in its second Lock (runtime.Stack of every
//	          goroutine: "[semacquire" in Go 1.19, "[sync.Mutex.Lock" from
//	          1.20), and unlocks: the Unlock readies the parked worker
//	          (semrelease -> goready), a wake child -> worker.
//	go_timer  the worker sleeps (time.Sleep > 0 always parks): its timer,
//	          run by the scheduler on g0, readies it; the wake's source is
//	          a thread of this process that the program cannot name
//	          (SRC_TID '-', FORMAT.md).
//	go_chan   the worker burns a little more and replies over the job's
//	          unbuffered channel, non-blocking first: when that succeeds
//	          the handler was parked in its receive and the send readied it
//	          (a wake worker -> handler, a hop); otherwise it sends
//	          blocking and the handoff is no wake into the handler (no hop,
//	          counted in config reply_blocking).
//
// CPU. Each stretch a goroutine works for a request without blocking is
// run with runtime.LockOSThread: no other goroutine runs on its thread
// meanwhile and it does not move, so the thread's CLOCK_THREAD_CPUTIME_ID
// delta over the stretch is the goroutine's CPU, charged to that thread
// (cpu lines are per thread, as the analyzer's samples are). WALL_NS is
// the wall time of those stretches: a parked goroutine is on no thread,
// and no thread's off-CPU time is its (docs/model.md §6.1 charges a
// context's off-CPU time; a parked goroutine's thread runs others).
//
// Times are CLOCK_MONOTONIC ns, the capture's clock: runtime.nanotime is
// clock_gettime(CLOCK_MONOTONIC) through the vDSO on linux/amd64.
//
// The truth is kept in memory and written after the last request.
//
//	gotruth -truth FILE [-requests N] [-clients C] [-workers W]
//	        [-work-us U] [-sleep-us S]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gotruth: "+format+"\n", args...)
	os.Exit(1)
}

// RawSyscall: neither call blocks, and the runtime need not hand the P off.
func gettid() int64 {
	tid, _, _ := syscall.RawSyscall(syscall.SYS_GETTID, 0, 0, 0)
	return int64(tid)
}

func threadCPU() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID,
		uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		die("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", e)
	}
	return ts.Sec*1e9 + ts.Nsec
}

// goid of the calling goroutine: the "goroutine N [" header of its own
// traceback.
func goid() int64 {
	var buf [64]byte
	var id int64
	n := runtime.Stack(buf[:], false)
	if _, err := fmt.Sscanf(string(buf[:n]), "goroutine %d [", &id); err != nil || id <= 0 {
		die("unexpected runtime.Stack header: %.40q", buf[:n])
	}
	return id
}

// A stretch of work for a request on one thread (see CPU, above).
type stretch struct {
	tid, cpu0, t0 int64
}

func begin() stretch {
	runtime.LockOSThread()
	return stretch{gettid(), threadCPU(), nanotime()}
}

func (s stretch) end(q *request) {
	cpu, t := threadCPU(), nanotime()
	if tid := gettid(); tid != s.tid {
		die("a locked goroutine moved from thread %d to %d", s.tid, tid)
	}
	runtime.UnlockOSThread()
	q.charge(s.tid, cpu-s.cpu0, t-s.t0)
}

type use struct{ cpu, wall int64 }

type hop struct {
	mech string
	// srcTid: the thread the source ran on during the call that made
	// the hop (locked to it), read before the source parks; 0: a thread
	// the program cannot name.
	srcTid, srcTask int64
	srcReq          bool // the request was open in the source's context
	effect, objType string
	objKey, c0, c1  int64
	// The wakee's return from the wait the hop ended: C1 is at most
	// that, or a source preempted after its call would have a window
	// that the wakee's later wakes fall in (FORMAT.md, RULE direct).
	until *int64
}

type request struct {
	mu      sync.Mutex
	rid     int64
	appID   uint64 // the *http.Request's address
	origin  int64  // the serving goroutine's thread at the handler's start
	serving int64  // the serving goroutine
	lastTid int64  // its thread at the handler's end
	b0, b1  int64
	e0, e1  int64
	// the wakees' returns from their waits (hop.until)
	jobTaken, lockTaken, replyTaken int64
	used                            map[int64]*use
	hops                            []hop
	done                            bool
}

func (q *request) charge(tid, cpu, wall int64) {
	q.mu.Lock()
	u := q.used[tid]
	if u == nil {
		u = &use{}
		q.used[tid] = u
	}
	u.cpu += cpu
	u.wall += wall
	q.mu.Unlock()
}

func (q *request) add(h hop) {
	q.mu.Lock()
	q.hops = append(q.hops, h)
	q.mu.Unlock()
}

var (
	workNs, sleepNs int64
	reqs            []*request
	jobs            = make(chan *job)
	sink            uint64
	jobRetries      int64
	replyBlocking   int64
	mutexPolls      int64
	// The workers and children, waited for before the truth is written:
	// a worker records its reply's hop after the send that lets the
	// client finish.
	busy sync.WaitGroup
)

type job struct {
	q       *request
	handler int64 // the serving goroutine
	worker  int64 // set by the worker that took it
	reply   chan struct{}
}

// burn spins for about d ns of this thread's CPU.
//
//go:noinline
func burn(d int64) {
	x := uint64(88172645463325252)
	for end := threadCPU() + d; threadCPU() < end; {
		for i := 0; i < 2048; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink += x
}

// stackBusy and stackBuf: one runtime.Stack of every goroutine at a time,
// taken by spinning (CAS, Gosched), which parks nothing. Two children in
// runtime.Stack at once would queue on the runtime's worldsema, and the
// one that releases it would ready the other: a handoff from one request
// to another, which a causal profiler rightly follows (docs/model.md
// §6.2), that the pipeline does not mean.
var (
	stackBusy int32
	stackBuf  = make([]byte, 1<<16)
)

// parkedInLock: the runtime's word that goroutine id is parked in a
// Lock. runtime.Stack of every goroutine stops the world for it.
func parkedInLock(id int64) bool {
	for !atomic.CompareAndSwapInt32(&stackBusy, 0, 1) {
		runtime.Gosched()
	}
	defer atomic.StoreInt32(&stackBusy, 0)
	all := string(stackBuf[:runtime.Stack(stackBuf, true)])
	_, status, found := strings.Cut(all, fmt.Sprintf("goroutine %d [", id))
	if !found {
		die("goroutine %d not in runtime.Stack", id)
	}
	// "semacquire" before Go 1.20, "sync.Mutex.Lock" from it
	for _, r := range []string{"semacquire", "sync.Mutex.Lock"} {
		if strings.HasPrefix(status, r) {
			return true
		}
	}
	return false
}

// child: started by the worker holding mu, it burns, then unlocks mu
// once the worker is parked in its Lock.
func child(q *request, mu *sync.Mutex, worker int64, me *int64) {
	s := begin()
	*me = goid() // read by the worker after its Lock: the mutex orders it
	burn(workNs)
	for !parkedInLock(worker) {
		atomic.AddInt64(&mutexPolls, 1)
		runtime.Gosched()
	}
	c0 := nanotime()
	mu.Unlock()
	c1 := nanotime()
	q.add(hop{"go_mutex", s.tid, *me, true, "wake", "runtime_task", worker, c0, c1, &q.lockTaken})
	s.end(q)
	busy.Done()
}

func worker() {
	defer busy.Done()
	me := goid()
	for j := range jobs {
		q := j.q
		q.jobTaken = nanotime()
		j.worker = me
		s := begin()
		var mu sync.Mutex
		var kid int64
		mu.Lock()
		busy.Add(1)
		c0 := nanotime()
		go child(q, &mu, me, &kid)
		c1 := nanotime()
		// The spawn's thread is this stretch's: the hop is written
		// after the Lock (kid is known then), which parks the worker,
		// and it may resume on another thread.
		spawner := s.tid
		burn(workNs)
		s.end(q)
		mu.Lock() // parks until the child's Unlock readies it
		q.lockTaken = nanotime()
		s = begin()
		mu.Unlock()
		q.add(hop{"go_spawn", spawner, me, true, "spawn", "runtime_task", kid, c0, c1, nil})
		s.end(q)
		c0 = nanotime()
		time.Sleep(time.Duration(sleepNs))
		c1 = nanotime()
		q.add(hop{"go_timer", 0, 0, false, "wake", "runtime_task", me, c0, c1, nil})
		s = begin()
		burn(workNs / 2)
		c0 = nanotime()
		select {
		case j.reply <- struct{}{}:
			c1 = nanotime()
			q.add(hop{"go_chan", s.tid, me, true, "wake", "runtime_task", j.handler, c0, c1, &q.replyTaken})
			s.end(q)
		default:
			s.end(q)
			atomic.AddInt64(&replyBlocking, 1)
			j.reply <- struct{}{}
		}
	}
}

func handle(w http.ResponseWriter, r *http.Request) {
	b1 := nanotime()
	s := begin()
	me := goid()
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
	if err != nil || n < 1 || n > len(reqs) || !strings.HasPrefix(r.URL.Path, "/r/") {
		die("bad request %q", r.URL.Path)
	}
	q := reqs[n-1]
	q.appID = uint64(uintptr(unsafe.Pointer(r)))
	q.b1, q.origin, q.serving = b1, s.tid, me
	j := &job{q: q, handler: me, reply: make(chan struct{})}
	for {
		c0 := nanotime()
		select {
		case jobs <- j:
			c1 := nanotime()
			// The send's thread is this stretch's: the hop is
			// written after the reply (j.worker is known then),
			// which parks the handler, and it may resume on
			// another thread.
			sender := s.tid
			s.end(q)
			<-j.reply
			q.replyTaken = nanotime()
			s = begin()
			// j.worker was set before the reply: the channel orders it
			q.add(hop{"go_chan", sender, me, true, "wake", "runtime_task", j.worker, c0, c1, &q.jobTaken})
			fmt.Fprintf(w, "%d\n", n)
			q.lastTid = s.tid
			s.end(q)
			q.e0 = nanotime()
			return
		default:
			atomic.AddInt64(&jobRetries, 1)
			runtime.Gosched()
		}
	}
}

func main() {
	truth := flag.String("truth", "", "ground truth file (required)")
	nreq := flag.Int("requests", 300, "requests")
	nclients := flag.Int("clients", 2, "client goroutines")
	nworkers := flag.Int("workers", 4, "worker goroutines")
	workUs := flag.Int("work-us", 2000, "CPU burnt by the worker and by the child per request, us")
	sleepUs := flag.Int("sleep-us", 1000, "the worker's sleep per request, us")
	flag.Parse()
	if *truth == "" || *nreq < 1 || *nclients < 1 || *nworkers < 1 || *workUs < 0 || *sleepUs < 1 {
		fmt.Fprintln(os.Stderr, "usage: gotruth -truth FILE [-requests N] [-clients C] [-workers W] [-work-us U] [-sleep-us S]")
		os.Exit(2)
	}
	out, err := os.Create(*truth)
	if err != nil {
		die("%v", err)
	}
	workNs, sleepNs = int64(*workUs)*1000, int64(*sleepUs)*1000
	reqs = make([]*request, *nreq)
	for i := range reqs {
		reqs[i] = &request{rid: int64(i + 1), used: map[int64]*use{}}
	}
	busy.Add(*nworkers)
	for i := 0; i < *nworkers; i++ {
		go worker()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		die("listen: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(handle)}
	go srv.Serve(ln)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *nclients}}

	var next int64
	var wg sync.WaitGroup
	for c := 0; c < *nclients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := atomic.AddInt64(&next, 1)
				if n > int64(len(reqs)) {
					return
				}
				q := reqs[n-1]
				url := fmt.Sprintf("http://127.0.0.1:%d/r/%d", port, n)
				q.b0 = nanotime()
				resp, err := client.Get(url)
				if err != nil {
					die("GET %s: %v", url, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				q.e1 = nanotime()
				if err != nil || resp.StatusCode != 200 || string(body) != fmt.Sprintf("%d\n", n) {
					die("GET %s: %v %d %q", url, err, resp.StatusCode, body)
				}
				q.done = true
			}
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	srv.Close()
	close(jobs)
	busy.Wait()
	write(out, *truth, map[string]interface{}{
		"workload": "gotruth", "go": runtime.Version(), "requests": *nreq, "clients": *nclients,
		"workers": *nworkers, "work_us": *workUs, "sleep_us": *sleepUs,
		"job_retries": atomic.LoadInt64(&jobRetries), "reply_blocking": atomic.LoadInt64(&replyBlocking),
		"mutex_polls": atomic.LoadInt64(&mutexPolls),
	})
}

func write(out *os.File, path string, config map[string]interface{}) {
	b := bufio.NewWriter(out)
	fmt.Fprintf(b, "truth\t1\npid\t%d\n", os.Getpid())
	for _, k := range []string{"workload", "go", "requests", "clients", "workers", "work_us",
		"sleep_us", "job_retries", "reply_blocking", "mutex_polls"} {
		fmt.Fprintf(b, "config\t%s\t%v\n", k, config[k])
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		die("/proc/self/task: %v", err)
	}
	for _, t := range tasks {
		fmt.Fprintf(b, "thread\t%s\tgo\n", t.Name())
	}
	hid := 0
	for _, q := range reqs {
		if !q.done {
			die("request %d not done", q.rid)
		}
		fmt.Fprintf(b, "request\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", q.rid, q.appID, q.origin,
			q.b0, q.b1, q.e0, q.e1)
		for tid, u := range q.used {
			fmt.Fprintf(b, "cpu\t%d\t%d\t%d\t%d\n", q.rid, tid, u.cpu, u.wall)
		}
		// go_http: ServeHTTP's entry begins the request on the serving
		// goroutine, after the client sent it and before the handler's
		// first statement; its return ends it, after the handler's last
		// statement and before the client has the response (the server
		// sends it once ServeHTTP has returned).
		hops := append([]hop{
			{"go_http", q.origin, q.serving, false, "begin", "request", int64(q.appID), q.b0, q.b1, nil},
			{"go_http", q.lastTid, 0, true, "end", "runtime_task", q.serving, q.e0, q.e1, nil},
		}, q.hops...)
		for _, h := range hops {
			hid++
			src, task, req := "-", "-", "-"
			if h.srcTid != 0 {
				src = strconv.FormatInt(h.srcTid, 10)
			}
			if h.srcTask != 0 {
				task = strconv.FormatInt(h.srcTask, 10)
			}
			if h.until != nil && *h.until < h.c1 {
				h.c1 = *h.until
			}
			if h.srcReq {
				req = strconv.FormatUint(q.appID, 10)
			}
			fmt.Fprintf(b, "hop\t%d\t%d\t%s\tdirect\t%s\t%s\t%s\t-\t%s\t%d\t-\t-\t-\t%s\t-\t%d\t%d\t-\n",
				hid, q.rid, h.mech, src, task, req, h.objType, h.objKey, h.effect, h.c0, h.c1)
		}
	}
	if err := b.Flush(); err != nil {
		die("%s: %v", path, err)
	}
	if err := out.Close(); err != nil {
		die("%s: %v", path, err)
	}
}
