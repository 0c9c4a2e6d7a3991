package block

// For the tests of package block_test, which run the scenarios' workloads
// (scenarios imports this package through the registry).
var (
	DiskDir    = diskDir
	DiskOf     = diskOf
	DataWrites = dataWrites
	WriteBytes = writeBytes
)
