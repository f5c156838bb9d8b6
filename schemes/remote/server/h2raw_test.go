package server_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"
)

// rawH2 is an HTTP/2 client written with x/net/http2's Framer, for what no well-behaved
// client does: several protocols on one connection as a proxy sends them, requests whose
// answers it never reads, frames at chosen moments.
type rawH2 struct {
	t    testing.TB
	c    net.Conn
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
	next uint32
}

// dialH2 opens a cleartext HTTP/2 connection (prior knowledge) and sends the client preface
// with settings.
func dialH2(t testing.TB, addr string, settings ...http2.Setting) *rawH2 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &rawH2{t: t, c: c, fr: http2.NewFramer(c, c), next: 1}
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	r.enc = hpack.NewEncoder(&r.hbuf)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return r
}

// send starts a request and returns its stream ID. Header names are lower case; the pseudo
// headers come from method and path.
func (r *rawH2) send(method, path string, body []byte, hdrs ...string) uint32 {
	r.t.Helper()
	r.hbuf.Reset()
	for _, f := range [][2]string{{":method", method}, {":scheme", "http"}, {":authority", "idkitd"}, {":path", path}} {
		r.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i+1 < len(hdrs); i += 2 {
		r.enc.WriteField(hpack.HeaderField{Name: hdrs[i], Value: hdrs[i+1]})
	}
	id := r.next
	r.next += 2
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.hbuf.Bytes(), EndHeaders: true, EndStream: body == nil}); err != nil {
		r.t.Fatal(err)
	}
	if body != nil {
		if err := r.fr.WriteData(id, true, body); err != nil {
			r.t.Fatal(err)
		}
	}
	return id
}

// rawResponse is what came back on one stream.
type rawResponse struct {
	header  map[string]string // response headers and trailers, ":status" included
	body    []byte
	aborted bool // RST_STREAM or GOAWAY ended it
}

func (res rawResponse) status() int { n, _ := strconv.Atoi(res.header[":status"]); return n }

// read reads frames until stream id ends, answering SETTINGS and PING and granting flow
// control for what it reads.
func (r *rawH2) read(id uint32) rawResponse {
	r.t.Helper()
	res := rawResponse{header: map[string]string{}}
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer r.c.SetReadDeadline(time.Time{})
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			r.t.Fatalf("stream %d: reading: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				r.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				r.fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			if f.LastStreamID < id {
				res.aborted = true
				return res
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID != id {
				continue
			}
			for _, h := range f.Fields {
				res.header[h.Name] = h.Value
			}
			if f.StreamEnded() {
				return res
			}
		case *http2.DataFrame:
			if n := len(f.Data()); n > 0 {
				r.fr.WriteWindowUpdate(0, uint32(n))
				r.fr.WriteWindowUpdate(f.StreamID, uint32(n))
			}
			if f.StreamID != id {
				continue
			}
			res.body = append(res.body, f.Data()...)
			if f.StreamEnded() {
				return res
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				res.aborted = true
				return res
			}
		}
	}
}

// grpcFrame is a gRPC length-prefixed message.
func grpcFrame(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// describe is a response in one line for failure messages.
func (res rawResponse) describe() string {
	var hs []string
	for k, v := range res.header {
		hs = append(hs, k+"="+v)
	}
	return fmt.Sprintf("headers %v, body %.120q, aborted %v", strings.Join(hs, " "), res.body, res.aborted)
}
