package result

// Device is the block device a trial's workload wrote to when it had one
// of its own (the fsync kind's device: scratch): what it was, so that a
// reader can tell a loop device's latency from a virtio disk's.
type Device struct {
	Kind string `json:"kind"` // DeviceLoop or DeviceVirtioBlk
	// Name is the device as /sys/block names it: loop3, vdb.
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	// DirectIO is set for a loop device that writes its backing file with
	// direct I/O.
	DirectIO bool `json:"direct_io,omitempty"`
}

// Kinds of Device.
const (
	DeviceLoop      = "loop"
	DeviceVirtioBlk = "virtio-blk"
)
