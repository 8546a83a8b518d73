// The Go program of tests/go/gobin.sh: goroutines handing work over
// channels, a mutex, a sleep, and a net/http server on 127.0.0.1 whose
// handler waits on a worker, so that the runtime functions and
// net/http.serverHandler.ServeHTTP are linked and used. "offsets" prints
// the field offsets the compiler itself lays out (unsafe.Offsetof), for
// the test to hold gobin's DWARF answers to; "serve" runs the server and
// one request through it.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
	"unsafe"
)

type job struct {
	n    int
	done chan int
}

func worker(jobs chan job) {
	for j := range jobs {
		j.done <- j.n * 2
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "offsets" {
		var r http.Request
		var u url.URL
		fmt.Printf("offset net/http.Request.Method %d\n", unsafe.Offsetof(r.Method))
		fmt.Printf("offset net/http.Request.URL %d\n", unsafe.Offsetof(r.URL))
		fmt.Printf("offset net/url.URL.Path %d\n", unsafe.Offsetof(u.Path))
		return
	}
	jobs := make(chan job)
	go worker(jobs)
	var mu sync.Mutex
	http.HandleFunc("/item/", func(w http.ResponseWriter, r *http.Request) {
		d := make(chan int)
		mu.Lock()
		jobs <- job{len(r.URL.Path), d}
		mu.Unlock()
		fmt.Fprintln(w, <-d)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	time.Sleep(time.Millisecond)
	resp, err := http.Get("http://" + ln.Addr().String() + "/item/3")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s", body)
}
