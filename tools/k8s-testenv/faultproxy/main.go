// faultproxy: an HTTP proxy on 127.0.0.1 in front of a Kubernetes API server that injects the faults a
// client must survive, on a fixed schedule, and counts the requests it passes (for shardflow's tests).
//
//	faultproxy -upstream https://127.0.0.1:6443 -ca ca.crt -cert admin.crt -key admin.key \
//	    [-every-429 7] [-every-500 11] [-every-503 13] [-cut-watch-every 2] [-gone-watch 3]
//
// It prints "PORT n" once it listens (plain HTTP: the client talks to it without credentials; it talks
// to the API server with the given client certificate). Faults:
//   - the n-th request that is not a watch, for n a multiple of -every-429, gets 429 with Retry-After: 1,
//     of -every-500 a 500, of -every-503 a 503 (each a Kubernetes Status; nothing reaches the server);
//   - every -cut-watch-every-th watch is cut after its 3rd event, in the middle of the 4th line;
//   - the -gone-watch-th watch gets an ERROR event with code 410 (Gone) and ends;
//   - with -away-after-job-posts n, once n POSTs of Jobs have passed the proxy is away for -away-seconds:
//     the open watches are cut and every request's connection is closed without an answer, as when
//     the API server goes down (the next POST of a Job is the first to find it away).
//
// GET /_stats (not counted) answers {"requests": n, "watches": n, "injected": {"429": n, ...}}.
// With -exit-on-stdin-eof it ends when its stdin ends; else when killed.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

type stats struct {
	mu       sync.Mutex
	Requests int            `json:"requests"`
	Watches  int            `json:"watches"`
	Injected map[string]int `json:"injected"`
	jobPosts int
	away     time.Time        // away until then
	open     map[*bool]func() // the open watches: each one's cut
}

// closeConn ends the request's connection without an answer.
func closeConn(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

func status(code int, reason, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"code": code, "reason": reason, "message": msg})
	return b
}

func main() {
	upstream := flag.String("upstream", "", "the API server, https://host:port")
	ca := flag.String("ca", "", "its CA (PEM file)")
	cert := flag.String("cert", "", "client certificate (PEM file)")
	key := flag.String("key", "", "client key (PEM file)")
	e429 := flag.Int("every-429", 0, "answer every n-th plain request 429 (0: never)")
	e500 := flag.Int("every-500", 0, "answer every n-th plain request 500 (0: never)")
	e503 := flag.Int("every-503", 0, "answer every n-th plain request 503 (0: never)")
	cutEvery := flag.Int("cut-watch-every", 0, "cut every n-th watch after 3 events (0: never)")
	goneWatch := flag.Int("gone-watch", 0, "the n-th watch gets 410 Gone (0: none)")
	stdinEOF := flag.Bool("exit-on-stdin-eof", false, "end when stdin ends")
	awayAfter := flag.Int("away-after-job-posts", 0, "go away after this many POSTs of Jobs (0: never)")
	awaySeconds := flag.Int("away-seconds", 15, "for this long")
	flag.Parse()

	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		log.Fatalf("-upstream: %q is not a URL", *upstream)
	}
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(*ca)
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		log.Fatalf("-ca: cannot read a certificate from %s", *ca)
	}
	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		log.Fatalf("-cert/-key: %v", err)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = transport
	proxy.FlushInterval = -1

	st := &stats{Injected: map[string]int{}, open: map[*bool]func(){}}
	handler := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_stats" {
			st.mu.Lock()
			b, _ := json.Marshal(st)
			st.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return
		}
		q := r.URL.Query()
		watch := q.Get("watch") == "1" || q.Get("watch") == "true"
		st.mu.Lock()
		if time.Now().Before(st.away) {
			st.Injected["away"]++
			st.mu.Unlock()
			closeConn(w)
			return
		}
		if *awayAfter > 0 && r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/jobs") {
			st.jobPosts++
			if st.jobPosts == *awayAfter {
				defer func() { // once this POST has passed
					st.mu.Lock()
					st.away = time.Now().Add(time.Duration(*awaySeconds) * time.Second)
					for _, cut := range st.open {
						cut()
					}
					st.mu.Unlock()
				}()
			}
		}
		st.Requests++
		n := st.Requests
		w_n := 0
		fault := ""
		if watch {
			st.Watches++
			w_n = st.Watches
			if *goneWatch > 0 && w_n == *goneWatch {
				fault = "watch-410"
			} else if *cutEvery > 0 && w_n%*cutEvery == 0 {
				fault = "watch-cut"
			}
		} else if *e429 > 0 && n%*e429 == 0 {
			fault = "429"
		} else if *e500 > 0 && n%*e500 == 0 {
			fault = "500"
		} else if *e503 > 0 && n%*e503 == 0 {
			fault = "503"
		}
		if fault != "" {
			st.Injected[fault]++
		}
		st.mu.Unlock()

		switch fault {
		case "429", "500", "503":
			code := map[string]int{"429": 429, "500": 500, "503": 503}[fault]
			w.Header().Set("Content-Type", "application/json")
			if code != 500 {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(code)
			w.Write(status(code, "Injected", "injected by faultproxy"))
			return
		case "watch-410":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			ev, _ := json.Marshal(map[string]any{"type": "ERROR", "object": json.RawMessage(
				status(410, "Expired", "too old resource version (injected by faultproxy)"))})
			w.Write(append(ev, '\n'))
			return
		}
		if !watch {
			proxy.ServeHTTP(w, r)
			return
		}
		serveWatch(w, r, u, transport, fault == "watch-cut", st)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("PORT %d\n", ln.Addr().(*net.TCPAddr).Port)
	if *stdinEOF {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
	}
	log.Fatal(http.Serve(ln, http.HandlerFunc(handler)))
}

// serveWatch passes a watch stream through line by line; with cut, it ends the connection in the middle
// of the 4th line.
func serveWatch(w http.ResponseWriter, r *http.Request, u *url.URL, t *http.Transport, cut bool, st *stats) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String()+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := t.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), 502)
		return
	}
	defer resp.Body.Close()
	// Going away cuts it: its upstream body closed, then (below) its connection.
	aborted := false
	st.mu.Lock()
	st.open[&aborted] = func() { aborted = true; resp.Body.Close() }
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.open, &aborted)
		st.mu.Unlock()
	}()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	flusher := w.(http.Flusher)
	flusher.Flush()
	in := bufio.NewReader(resp.Body)
	for lines := 0; ; lines++ {
		line, err := in.ReadBytes('\n')
		if cut && lines == 3 && len(line) > 1 {
			w.Write(line[:len(line)/2])
			flusher.Flush()
			if conn, _, herr := w.(http.Hijacker).Hijack(); herr == nil {
				conn.Close()
			}
			return
		}
		st.mu.Lock()
		gone := aborted
		st.mu.Unlock()
		if gone {
			closeConn(w)
			return
		}
		if len(line) > 0 {
			w.Write(line)
			flusher.Flush()
		}
		if err != nil {
			return
		}
	}
}
