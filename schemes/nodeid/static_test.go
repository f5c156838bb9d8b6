package nodeid_test

import (
	"errors"
	"net"
	"testing"

	"github.com/idkit/idkit/schemes/nodeid"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		node, nodes uint64
		ok          bool
	}{{0, 1, true}, {0, 1024, true}, {1023, 1024, true}, {1024, 1024, false}, {1, 1, false}, {0, 0, false}} {
		err := nodeid.Check(tc.node, tc.nodes)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, nodeid.ErrRange) {
			t.Errorf("Check(%d, %d) = %v, want ok=%v", tc.node, tc.nodes, err, tc.ok)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"N": "7", "HEX": "0x1f", "BIG": "1024", "BAD": "seven", "EMPTY": " "}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		name string
		want uint64
		err  error
	}{
		{"N", 7, nil},
		{"HEX", 31, nil},
		{"BIG", 0, nodeid.ErrRange},
		{"BAD", 0, errors.New("any")},
		{"EMPTY", 0, nodeid.ErrNoSource},
		{"UNSET", 0, nodeid.ErrNoSource},
	} {
		got, err := nodeid.FromEnv(tc.name, 1024, lookup)
		switch {
		case tc.err == nil && (err != nil || got != tc.want):
			t.Errorf("FromEnv(%s) = %d, %v, want %d", tc.name, got, err, tc.want)
		case tc.err != nil && err == nil:
			t.Errorf("FromEnv(%s) = %d, want an error", tc.name, got)
		case tc.err != nil && tc.err.Error() != "any" && !errors.Is(err, tc.err):
			t.Errorf("FromEnv(%s) error %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestFromPrivateIPv4(t *testing.T) {
	ipnet := func(s string) net.Addr { return &net.IPNet{IP: net.ParseIP(s), Mask: net.CIDRMask(24, 32)} }
	for _, tc := range []struct {
		name  string
		addrs []net.Addr
		nodes uint64
		want  uint64
		err   error
	}{
		{"sonyflake bits", []net.Addr{ipnet("127.0.0.1"), ipnet("8.8.8.8"), ipnet("10.1.2.3")}, 1 << 16, 2<<8 | 3, nil},
		{"twitter bits", []net.Addr{ipnet("192.168.7.200")}, 1024, (7<<8 | 200) & 1023, nil},
		{"ipaddr", []net.Addr{&net.IPAddr{IP: net.ParseIP("172.16.0.9")}}, 256, 9, nil},
		{"ipv6 only", []net.Addr{ipnet("fd00::1")}, 256, 0, nodeid.ErrNoSource},
		{"public only", []net.Addr{ipnet("8.8.8.8")}, 256, 0, nodeid.ErrNoSource},
		{"not a power of two", []net.Addr{ipnet("10.0.0.1")}, 1000, 0, nodeid.ErrRange},
	} {
		got, err := nodeid.FromPrivateIPv4(tc.addrs, tc.nodes)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v, want %d", tc.name, got, err, tc.want)
		}
	}
}
