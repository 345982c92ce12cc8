package render

// nginx keeps server names, map keys and variable names in hash tables
// whose bucket must hold whole entries: with a fixed bucket size, one long
// enough host (111 characters in a map, more in server_name) makes the
// whole configuration fail with "could not build ... hash", an error that
// names no file and so no object. The sizes are therefore derived from
// what the Model holds, so any valid host (253 characters) fits.

// hashStats is what the rendered configuration puts in nginx's hashes.
type hashStats struct {
	names      int // server names
	longest    int // longest server name or map key (a host)
	mapEntries int // entries of the largest map
	variables  int // variables the configuration defines (maps)
	longestVar int // longest variable name
}

func (h *hashStats) host(name string) {
	h.names++
	h.longest = max(h.longest, len(name))
}

func (h *hashStats) mapped(variable string, entries int) {
	h.variables++
	h.longestVar = max(h.longestVar, len(variable))
	h.mapEntries = max(h.mapEntries, entries)
}

// hashEntrySize is the size of one entry of an nginx hash (ngx_hash_elt_t
// on a 64-bit system: a value pointer, a 2-byte length and the name,
// aligned to the pointer size).
func hashEntrySize(nameLen int) int {
	const ptr = 8
	return ptr + (nameLen+2+ptr-1)/ptr*ptr
}

// entriesPerBucket is how many of the longest entries a bucket must hold:
// enough that nginx finds a table size without a collision-free hash.
const entriesPerBucket = 3

// bucketSize is a power of two that holds entriesPerBucket entries of
// length longest plus the bucket's terminating pointer, and at least min.
func bucketSize(longest, min int) int {
	need := 8 + entriesPerBucket*hashEntrySize(longest)
	size := min
	for size < need {
		size *= 2
	}
	return size
}

// maxSize is a power of two of at least twice n, and at least min: nginx
// searches table sizes up to it and uses the first that fits.
func maxSize(n, min int) int {
	size := min
	for size < 2*n {
		size *= 2
	}
	return size
}

// builtinVariables is room for the variables nginx and its modules define
// themselves.
const builtinVariables = 512

// hashView is what nginx.conf prints.
type hashView struct {
	ServerNamesMaxSize, ServerNamesBucketSize int
	MapMaxSize, MapBucketSize                 int
	VariablesMaxSize, VariablesBucketSize     int
}

func (h hashStats) view() hashView {
	return hashView{
		ServerNamesMaxSize:    maxSize(h.names, 1024),
		ServerNamesBucketSize: bucketSize(h.longest, 256),
		MapMaxSize:            maxSize(max(h.names, h.mapEntries), 1024),
		MapBucketSize:         bucketSize(h.longest, 128),
		VariablesMaxSize:      maxSize(h.variables+builtinVariables, 1024),
		VariablesBucketSize:   bucketSize(h.longestVar, 64),
	}
}
