// Package cutproxy is a TCP proxy for tests whose link can be cut, to play a network
// partition between a lease holder and its store without stopping the store.
package cutproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards connections from a loopback port to a target.
type Proxy struct {
	ln              net.Listener
	network, target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	held  []net.Conn // accepted while cut: neither forwarded nor closed until Restore
}

// New starts a proxy to target on network ("tcp" or "unix") and closes it when the test ends.
func New(t testing.TB, network, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cutproxy: %v", err)
	}
	p := &Proxy{ln: ln, network: network, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port returns the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Cut drops every open connection and black-holes new ones (accepted, then silent) until
// Restore, like a partition: clients see broken connections and hanging connects.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore ends the cut: held connections are closed, new ones are forwarded again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for _, c := range p.held {
		c.Close()
	}
	p.held = nil
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Cut()
	p.Restore()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.held = append(p.held, c)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	u, err := net.Dial(p.network, p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	c.Close()
	u.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}
