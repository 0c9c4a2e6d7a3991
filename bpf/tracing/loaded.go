package tracing

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Loaded keeps tracers' loaded programs and maps so that they are
// verified and attached once and counted through many times: by the trial
// workers of a run one after another, each a fresh process that gets them
// as inherited file descriptors (Export, ImportLoaded). A tracer loaded
// with TracerOptions.Loaded takes its collection from here when one of its
// name and variant is kept, resetting every map to what a fresh load would
// hold; otherwise it loads one and keeps it here. The first Tracer of a
// collection attaches it (Attach) and the attachment stays with the
// Loaded, in the process that made it, until Detach or Close: a worker
// given attached programs only sets which task they count. The
// collections are the Loaded's, not the Tracers': closing a Tracer stops
// its counting, closing the Loaded detaches and unloads.
type Loaded struct {
	mu   sync.Mutex
	sets map[string]*objectSet // by tracer name
}

type objectSet struct {
	variant Variant
	coll    *ebpf.Collection
	// used is set once a Tracer holds the set: two Tracers at once would
	// count into the same maps.
	used bool
	// links are the attachments this process made and keeps; elsewhere
	// says the process that exported the set keeps them (ImportLoaded).
	links     []link.Link
	attached  bool
	elsewhere bool
}

// NewLoaded returns an empty set of kept objects.
func NewLoaded() *Loaded { return &Loaded{sets: map[string]*objectSet{}} }

// errOtherVariant is a tracer asked for a variant other than the one kept:
// Load goes on to the next.
var errOtherVariant = errors.New("another variant of it is loaded")

// ErrStale is kept objects loaded with other load-time constants than a
// tracer now asks for: they would not measure what it asks.
var ErrStale = errors.New("kept objects were loaded with other load-time settings")

// Collection returns tracer name's collection of variant v for spec, as
// configured: a kept one, reset (see reuse), or one that load makes, kept
// from now on. keep says whether the caller owns the collection it gets:
// false when it is the Loaded's. With o nil, load makes one the caller
// owns. skip names maps left alone: those another object owns
// (replacements), and those the tracer keeps as they are (Options.Keep).
func (o *Loaded) Collection(name string, v Variant, spec *ebpf.CollectionSpec, skip map[string]*ebpf.Map, load func() (*ebpf.Collection, error)) (coll *ebpf.Collection, owned bool, err error) {
	if o == nil {
		coll, err = load()
		return coll, err == nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if set, ok := o.sets[name]; ok {
		switch {
		case set.variant != v:
			return nil, false, fmt.Errorf("%s: %w (%s)", name, errOtherVariant, set.variant)
		case set.used:
			return nil, false, fmt.Errorf("%s: kept objects are in use by another tracer", name)
		}
		if err := reuse(set.coll, spec, skip); err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		set.used = true
		return set.coll, false, nil
	}
	if coll, err = load(); err != nil {
		return nil, false, err
	}
	o.sets[name] = &objectSet{variant: v, coll: coll, used: true}
	return coll, false, nil
}

// Release makes tracer name's kept collection free for the next Tracer.
func (o *Loaded) Release(name string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if set, ok := o.sets[name]; ok {
		set.used = false
	}
}

// Attach attaches tracer name's kept programs with attach, unless they
// are attached already: by an earlier Tracer of this process, whose links
// stay here, or by the process that exported them. A program attached
// twice would run twice for every event and count it twice.
func (o *Loaded) Attach(name string, attach func() ([]link.Link, error)) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	set, ok := o.sets[name]
	if !ok {
		return fmt.Errorf("%s: no kept objects to attach", name)
	}
	if set.attached || set.elsewhere {
		return nil
	}
	links, err := attach()
	if err != nil {
		closeLinks(links)
		return err
	}
	set.links, set.attached = links, true
	return nil
}

// Detach detaches every kept program this process attached; they stay
// loaded, to be attached again by the next Tracer. It returns the first
// error.
func (o *Loaded) Detach() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.detach()
}

// detach is Detach with o.mu held.
func (o *Loaded) detach() error {
	var first error
	for name, set := range o.sets {
		if err := closeLinks(set.links); err != nil && first == nil {
			first = fmt.Errorf("%s: detach: %w", name, err)
		}
		set.links, set.attached = nil, false
	}
	return first
}

// closeLinks closes links at once: a close waits for the kernel's RCU
// grace periods, which waits that overlap share.
func closeLinks(links []link.Link) error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Go(func() { errs[i] = l.Close() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Programs returns the names of tracer name's kept programs; ok is false
// when none are kept (or o is nil).
func (o *Loaded) Programs(name string) (programs []string, ok bool) {
	if o == nil {
		return nil, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	set, ok := o.sets[name]
	if !ok {
		return nil, false
	}
	for p := range set.coll.Programs {
		programs = append(programs, p)
	}
	slices.Sort(programs)
	return programs, true
}

// Len is how many tracers' objects are kept.
func (o *Loaded) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.sets)
}

// Close detaches and unloads every kept collection.
func (o *Loaded) Close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.detach()
	for name, set := range o.sets {
		set.coll.Close()
		delete(o.sets, name)
	}
}

// reuse readies a kept collection for another Tracer, as a fresh load of
// spec would be: its constants (.rodata) must be spec's, its other global
// variables (.data, .bss) are set to spec's values, and every other map is
// emptied and given spec's contents. The programs may be attached, with
// the variables of the last Tracer's Close counting no task: the global
// variables, which say which tasks count, are set last, once the maps the
// programs count into are fresh.
func reuse(coll *ebpf.Collection, spec *ebpf.CollectionSpec, skip map[string]*ebpf.Map) error {
	names := make([]string, 0, len(coll.Maps))
	for name := range coll.Maps {
		if _, ok := skip[name]; !ok {
			names = append(names, name)
		}
	}
	section := func(name string) int {
		if strings.HasPrefix(name, ".") {
			return 1
		}
		return 0
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(section(a), section(b)), cmp.Compare(a, b))
	})
	for _, name := range names {
		m := coll.Maps[name]
		ms := spec.Maps[name]
		if ms == nil {
			return fmt.Errorf("map %s: not in the object", name)
		}
		if err := resetMap(name, m, ms, spec); err != nil {
			return fmt.Errorf("reset map %s: %w", name, err)
		}
	}
	return nil
}

func resetMap(name string, m *ebpf.Map, ms *ebpf.MapSpec, spec *ebpf.CollectionSpec) error {
	if strings.HasPrefix(name, ".") {
		return resetSection(name, m, ms, spec)
	}
	switch m.Type() {
	case ebpf.TaskStorage, ebpf.RingBuf, ebpf.PerfEventArray:
		// Task storage goes with the tasks, which are gone; a ring is
		// drained by its new reader.
		return nil
	case ebpf.SkStorage:
		// A socket's storage goes with the socket, which may outlive
		// the tracer: a tracer that keeps one dates what it holds
		// (request.bpf.c's conn_gen).
		return nil
	case ebpf.Array, ebpf.PerCPUArray:
		if err := zeroKeys(m, int(m.MaxEntries())); err != nil {
			return err
		}
	case ebpf.Hash, ebpf.LRUHash, ebpf.PerCPUHash, ebpf.LRUCPUHash, ebpf.StackTrace:
		if err := emptyMap(m); err != nil {
			return err
		}
	default:
		return fmt.Errorf("type %s cannot be reset", m.Type())
	}
	for _, kv := range ms.Contents {
		if err := m.Put(kv.Key, kv.Value); err != nil {
			return fmt.Errorf("contents: %w", err)
		}
	}
	return nil
}

// resetSection sets a data section's map to spec's values, or, for a
// constant section, checks that it holds them.
func resetSection(name string, m *ebpf.Map, ms *ebpf.MapSpec, spec *ebpf.CollectionSpec) error {
	if name == ".kconfig" || strings.HasPrefix(name, ".ksyms") {
		return nil // the kernel's own values, the same for every load
	}
	want, err := sectionValue(name, ms, spec)
	if err != nil {
		return err
	}
	if strings.HasPrefix(name, ".rodata") {
		got := make([]byte, len(want))
		if err := m.Lookup(uint32(0), got); err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return ErrStale
		}
		return nil
	}
	// A generation the programs cache verdicts of in task storage, which
	// tasks that lived through the last attach still hold, goes on
	// counting up instead of back to where a fresh load starts it.
	got := make([]byte, len(want))
	if err := m.Lookup(uint32(0), got); err != nil {
		return err
	}
	for _, g := range generations {
		v := spec.Variables[g]
		if v == nil || v.SectionName != name || v.Size() != 8 {
			continue
		}
		at := got[v.Offset : v.Offset+8]
		binary.NativeEndian.PutUint64(want[v.Offset:], binary.NativeEndian.Uint64(at)+1)
	}
	return m.Update(uint32(0), want, ebpf.UpdateAny)
}

// generations are the variables of follow.bpf.h and evidence.bpf.h that
// stamp what programs keep (a task's cached verdict, an event's trial):
// they never go back (see resetSection).
var generations = []string{"follow_gen", "evidence_epoch"}

// sectionValue is what a data section's map holds after a load of spec:
// its contents with each of its variables' values.
func sectionValue(name string, ms *ebpf.MapSpec, spec *ebpf.CollectionSpec) ([]byte, error) {
	data := make([]byte, ms.ValueSize)
	if len(ms.Contents) == 1 {
		b, ok := ms.Contents[0].Value.([]byte)
		if !ok {
			return nil, fmt.Errorf("contents are %T, not bytes", ms.Contents[0].Value)
		}
		copy(data, b)
	}
	for _, v := range spec.Variables {
		if v.SectionName != name || v.Value == nil {
			continue
		}
		end := int(v.Offset) + len(v.Value)
		if end > len(data) {
			return nil, fmt.Errorf("variable %s beyond the section", v.Name)
		}
		copy(data[v.Offset:end], v.Value)
	}
	return data, nil
}

// emptyMap deletes every key of a hash map.
func emptyMap(m *ebpf.Map) error {
	var keys [][]byte
	key := make([]byte, m.KeySize())
	var prev any // nil: the first key
	for {
		next := make([]byte, m.KeySize())
		if err := m.NextKey(prev, next); errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		} else if err != nil {
			return err
		}
		keys = append(keys, next)
		copy(key, next)
		prev = key
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}

// LoadedFiles says which inherited file descriptors hold which kept
// objects: what a parent sends a trial worker beside the files (Export).
type LoadedFiles struct {
	Sets []LoadedSet `json:"sets"`
}

// LoadedSet is one tracer's kept collection: each program's and
// map's descriptor number in the process that gets them.
type LoadedSet struct {
	Name     string         `json:"name"`
	Variant  Variant        `json:"variant"`
	Programs map[string]int `json:"programs"`
	Maps     map[string]int `json:"maps"`
	// Attached says the exporting process keeps the programs attached:
	// the importer must not attach them again.
	Attached bool `json:"attached,omitempty"`
}

// Export returns a copy of every kept program's and map's descriptor, as
// files for a child process whose descriptor first is the first of them
// (os/exec's ExtraFiles start at 3), and what they hold. The caller closes
// the files once the child has started.
func (o *Loaded) Export(first int) ([]*os.File, LoadedFiles, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var files []*os.File
	var out LoadedFiles
	add := func(name string, fd int) (int, error) {
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("export %s: %w", name, err)
		}
		files = append(files, os.NewFile(uintptr(dup), name))
		return first + len(files) - 1, nil
	}
	names := make([]string, 0, len(o.sets))
	for name := range o.sets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		set := o.sets[name]
		sf := LoadedSet{Name: name, Variant: set.variant, Programs: map[string]int{}, Maps: map[string]int{}, Attached: set.attached || set.elsewhere}
		for pn, p := range set.coll.Programs {
			n, err := add(name+"/"+pn, p.FD())
			if err != nil {
				closeAll(files)
				return nil, LoadedFiles{}, err
			}
			sf.Programs[pn] = n
		}
		for mn, m := range set.coll.Maps {
			n, err := add(name+"/"+mn, m.FD())
			if err != nil {
				closeAll(files)
				return nil, LoadedFiles{}, err
			}
			sf.Maps[mn] = n
		}
		out.Sets = append(out.Sets, sf)
	}
	return files, out, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// ImportLoaded takes the kept objects a parent exported to this process
// (Export) from the descriptors it inherited. Each descriptor is made
// close-on-exec first, so that nothing this process starts inherits it.
func ImportLoaded(files LoadedFiles) (*Loaded, error) {
	o := NewLoaded()
	for _, sf := range files.Sets {
		coll := &ebpf.Collection{Programs: map[string]*ebpf.Program{}, Maps: map[string]*ebpf.Map{}}
		o.sets[sf.Name] = &objectSet{variant: sf.Variant, coll: coll, elsewhere: sf.Attached}
		for pn, fd := range sf.Programs {
			unix.CloseOnExec(fd)
			p, err := ebpf.NewProgramFromFD(fd)
			if err != nil {
				o.Close()
				return nil, fmt.Errorf("%s: program %s from fd %d: %w", sf.Name, pn, fd, err)
			}
			coll.Programs[pn] = p
		}
		for mn, fd := range sf.Maps {
			unix.CloseOnExec(fd)
			m, err := ebpf.NewMapFromFD(fd)
			if err != nil {
				o.Close()
				return nil, fmt.Errorf("%s: map %s from fd %d: %w", sf.Name, mn, fd, err)
			}
			coll.Maps[mn] = m
		}
	}
	return o, nil
}

// ProgramIDs returns the kernel IDs of every kept program.
func (o *Loaded) ProgramIDs() []ebpf.ProgramID {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ids []ebpf.ProgramID
	for _, set := range o.sets {
		for _, p := range set.coll.Programs {
			if info, err := p.Info(); err == nil {
				if id, ok := info.ID(); ok {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}
