// bench/gohttp: a Go HTTP server for bench/servers (the go class's cost,
// docs/model.md §6.2). Each request is handed to one of 4 worker goroutines
// over a channel and answered when the worker replies: every request is a
// ServeHTTP, two goroutine handoffs and the netpoller's wakes. The address
// is its one argument.
package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	jobs := make(chan chan int)
	for i := 0; i < 4; i++ {
		go func() {
			for r := range jobs {
				s := 0
				for k := 0; k < 2000; k++ {
					s += k * k
				}
				r <- s
			}
		}()
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c := make(chan int)
		jobs <- c
		fmt.Fprintf(w, "%d\n", <-c)
	})
	fmt.Fprintln(os.Stderr, http.ListenAndServe(os.Args[1], nil))
}
