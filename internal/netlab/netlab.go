// Package netlab builds a small private network on one Linux machine for partition tests: each
// host is a network namespace of its own, joined to one or more Ethernet bridges by veth pairs,
// and a partition is a link taken off its bridge. Packets then vanish: no RST, no ICMP, the
// connections stay open and silent, and TCP retransmissions, keepalives and timeouts decide what
// each side believes, as on a real network whose switch failed.
//
// Everything lives in namespaces the lab made: the bridges sit in a hub namespace of their own,
// every address is assigned inside a host namespace, and nothing is connected to the machine's
// own network namespace, so no packet can leave the lab. Close removes every namespace (which
// removes their links); a lab left behind by a killed test is removed by the next New, which
// recognises it by the owning process ID in its names.
//
// It needs root and iproute2's ip; Available says why a lab cannot be built.
package netlab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// namePrefix starts the name of every namespace a lab makes: "iklab<pid>-<host>".
const namePrefix = "iklab"

// EnvLab is the environment variable through which a lab is handed to a process started
// inside one of its hosts (see Lab.Env and FromEnv).
const EnvLab = "IDKIT_NETLAB"

// ErrUnavailable is returned by Available and New when this machine cannot build a lab.
var ErrUnavailable = errors.New("netlab: network namespaces unavailable")

// Lab is a private network of hosts (namespaces) and nets (bridges in the hub namespace).
// Its methods are safe for concurrent use.
type Lab struct {
	mu     sync.Mutex
	Prefix string           `json:"prefix"` // namespace name prefix, iklab<pid>
	Hub    string           `json:"hub"`    // the namespace holding the bridges
	Nets   []string         `json:"nets"`   // net names; net i is bridge br<i>, subnet 10.<Base>.<i>.0/24
	Base   int              `json:"base"`   // second octet of every address
	Hosts  map[string]*Host `json:"hosts"`
	extra  int              // bridges made by Split
	closed bool
}

// Host is one namespace of a lab.
type Host struct {
	Name  string            `json:"name"`
	NS    string            `json:"ns"`
	Index int               `json:"index"` // 1-based; the last octet of its addresses
	Addrs map[string]string `json:"addrs"` // net name → IPv4 address
	Links map[string]string `json:"links"` // net name → the hub-side veth of its link to that net
}

// Available reports whether this process can build a lab: it must run as root with iproute2's
// ip on the PATH.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (ip netns add)", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no ip command (install iproute2)", ErrUnavailable)
	}
	return nil
}

// New makes a lab with the given nets (bridges), each its own /24 of 10.base.0.0/16 seen
// only inside the lab's namespaces. It first removes labs left behind by processes that are
// gone. base picks the second octet (1-254), so that two labs of one process do not share
// addresses (they could not reach each other anyway).
func New(ctx context.Context, base int, nets ...string) (*Lab, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if base < 1 || base > 254 {
		return nil, fmt.Errorf("netlab: base %d out of 1..254", base)
	}
	if len(nets) == 0 || len(nets) > 50 {
		return nil, fmt.Errorf("netlab: want 1 to 50 nets, got %d", len(nets))
	}
	Sweep(ctx)
	l := &Lab{Prefix: fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), base), Nets: nets, Base: base, Hosts: map[string]*Host{}}
	l.Hub = l.Prefix + "-hub"
	if err := run(ctx, "ip", "netns", "add", l.Hub); err != nil {
		return nil, err
	}
	for i := range nets {
		br := "br" + strconv.Itoa(i)
		if err := l.hub(ctx, "ip", "link", "add", br, "type", "bridge"); err != nil {
			l.Close()
			return nil, err
		}
		if err := l.hub(ctx, "ip", "link", "set", br, "up"); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// FromEnv returns the lab handed to this process through EnvLab, or nil when there is none.
// Such a lab belongs to the process that made it: Close does nothing to it.
func FromEnv() (*Lab, error) {
	v := os.Getenv(EnvLab)
	if v == "" {
		return nil, nil
	}
	var l Lab
	if err := json.Unmarshal([]byte(v), &l); err != nil {
		return nil, fmt.Errorf("netlab: %s: %w", EnvLab, err)
	}
	l.closed = true // not ours to remove
	return &l, nil
}

// Env returns EnvLab=<the lab>, for a process started inside a host (see Host.Command).
func (l *Lab) Env() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := json.Marshal(l)
	return EnvLab + "=" + string(b)
}

// AddHost makes a host attached to the given nets, with addresses 10.base.<net>.<index>.
func (l *Lab) AddHost(ctx context.Context, name string, nets ...string) (*Host, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.Hosts[name]; ok {
		return nil, fmt.Errorf("netlab: host %q exists", name)
	}
	if name == "" || strings.ContainsAny(name, " /\t\n") || len(name) > 20 {
		return nil, fmt.Errorf("netlab: bad host name %q", name)
	}
	h := &Host{Name: name, NS: l.Prefix + "-" + name, Index: len(l.Hosts) + 1, Addrs: map[string]string{}, Links: map[string]string{}}
	if h.Index > 250 {
		return nil, fmt.Errorf("netlab: too many hosts")
	}
	if err := run(ctx, "ip", "netns", "add", h.NS); err != nil {
		return nil, err
	}
	l.Hosts[name] = h
	steps := [][]string{
		{"ip", "netns", "exec", h.NS, "ip", "link", "set", "lo", "up"},
		// IPv6 would only add router and neighbour solicitations to the bridges.
		{"ip", "netns", "exec", h.NS, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"},
	}
	for _, net := range nets {
		ni := l.netIndex(net)
		if ni < 0 {
			return nil, fmt.Errorf("netlab: host %s: no net %q", name, net)
		}
		hubSide := fmt.Sprintf("h%dn%d", h.Index, ni) // interface names: 15 bytes at most
		inside := "eth" + strconv.Itoa(ni)
		addr := fmt.Sprintf("10.%d.%d.%d", l.Base, ni, h.Index)
		h.Addrs[net], h.Links[net] = addr, hubSide
		steps = append(steps,
			[]string{"ip", "link", "add", hubSide, "netns", l.Hub, "type", "veth", "peer", "name", inside, "netns", h.NS},
			[]string{"ip", "netns", "exec", l.Hub, "ip", "link", "set", hubSide, "master", "br" + strconv.Itoa(ni), "up"},
			[]string{"ip", "netns", "exec", h.NS, "ip", "addr", "add", addr + "/24", "dev", inside},
			[]string{"ip", "netns", "exec", h.NS, "ip", "link", "set", inside, "up"},
		)
	}
	for _, s := range steps {
		if err := run(ctx, s[0], s[1:]...); err != nil {
			return nil, fmt.Errorf("netlab: host %s: %w", name, err)
		}
	}
	return h, nil
}

func (l *Lab) netIndex(net string) int {
	for i, n := range l.Nets {
		if n == net {
			return i
		}
	}
	return -1
}

// Host returns the named host, or nil.
func (l *Lab) Host(name string) *Host {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Hosts[name]
}

// Cut takes host's link to net off its bridge: from then on its packets on that net vanish in
// both directions, while its side of the link stays up (it sees no carrier loss, as with a
// failure further away).
func (l *Lab) Cut(ctx context.Context, host, net string) error {
	link, err := l.link(host, net)
	if err != nil {
		return err
	}
	return l.hub(ctx, "ip", "link", "set", link, "nomaster")
}

// Heal puts host's link to net back on the net's own bridge.
func (l *Lab) Heal(ctx context.Context, host, net string) error {
	link, err := l.link(host, net)
	if err != nil {
		return err
	}
	return l.hub(ctx, "ip", "link", "set", link, "master", "br"+strconv.Itoa(l.netIndex(net)))
}

// Split divides net into two sides: the hosts named in minority move to a bridge of their
// own, the others stay; each side reaches only itself. HealNet joins them again.
func (l *Lab) Split(ctx context.Context, net string, minority ...string) error {
	l.mu.Lock()
	l.extra++
	br := fmt.Sprintf("bx%d", l.extra)
	l.mu.Unlock()
	if err := l.hub(ctx, "ip", "link", "add", br, "type", "bridge"); err != nil {
		return err
	}
	if err := l.hub(ctx, "ip", "link", "set", br, "up"); err != nil {
		return err
	}
	for _, h := range minority {
		link, err := l.link(h, net)
		if err != nil {
			return err
		}
		if err := l.hub(ctx, "ip", "link", "set", link, "master", br); err != nil {
			return err
		}
	}
	return nil
}

// HealNet puts every host's link to net back on the net's bridge, ending Cut and Split alike.
func (l *Lab) HealNet(ctx context.Context, net string) error {
	l.mu.Lock()
	var hosts []string
	for name, h := range l.Hosts {
		if _, ok := h.Links[net]; ok {
			hosts = append(hosts, name)
		}
	}
	l.mu.Unlock()
	for _, h := range hosts {
		if err := l.Heal(ctx, h, net); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) link(host, net string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.Hosts[host]
	if h == nil {
		return "", fmt.Errorf("netlab: no host %q", host)
	}
	link, ok := h.Links[net]
	if !ok {
		return "", fmt.Errorf("netlab: host %s is not on net %q", host, net)
	}
	return link, nil
}

func (l *Lab) hub(ctx context.Context, args ...string) error {
	return run(ctx, "ip", append([]string{"netns", "exec", l.Hub}, args...)...)
}

// Command returns a command that runs name inside host's namespace (ip netns exec, which
// execs it: the process's PID is the command's own, so signals reach it directly).
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Wrap returns the argument prefix that runs a command inside host's namespace.
func (h *Host) Wrap() []string { return []string{"ip", "netns", "exec", h.NS} }

// Close kills every process still inside the lab's namespaces and removes them with their
// links and bridges. It is safe to call twice; a lab from FromEnv is left alone.
func (l *Lab) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	return removePrefix(context.Background(), l.Prefix+"-")
}

// Sweep removes the namespaces of labs whose owning process is gone (a test killed by its
// timeout or a signal before its cleanup ran).
func Sweep(ctx context.Context) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return
	}
	dead := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], namePrefix) {
			continue
		}
		rest := strings.TrimPrefix(f[0], namePrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil {
			continue
		}
		if pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			dead[namePrefix+pidText+"-"] = true
		}
	}
	for p := range dead {
		removePrefix(ctx, p)
	}
}

// removePrefix kills the processes inside, and deletes, every namespace whose name starts
// with prefix.
func removePrefix(ctx context.Context, prefix string) error {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("netlab: ip netns list: %w", err)
	}
	var errs []error
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		if pids, err := exec.CommandContext(ctx, "ip", "netns", "pids", f[0]).Output(); err == nil {
			for _, p := range strings.Fields(string(pids)) {
				if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err := run(ctx, "ip", "netns", "del", f[0]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, name string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netlab: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
