package kube

import (
	"hash/maphash"
	"strconv"

	"k8s.io/client-go/tools/cache"
)

// indexBuckets is how many index values the host and Service indexes
// use. client-go's indexer keeps a set (a map of its own) per value:
// indexed by host or Service, that is a set for nearly every object,
// about 250 bytes for one key, 7 MB at 10,000 Ingresses and
// EndpointSlices, which the collector's pacing doubles. Indexed by a
// bucket of the value instead, a set holds a few keys, and readers keep
// the objects whose value is the one asked for (inBucket).
const indexBuckets = 4096

// bucketSeed is drawn once per process, so that the buckets stay the
// same for every informer while nobody can choose hosts that fall in one.
var bucketSeed = maphash.MakeSeed()

// bucket is the index value of value.
func bucket(value string) string {
	return strconv.FormatUint(maphash.String(bucketSeed, value)%indexBuckets, 10)
}

// bucketed turns an index function into one that indexes by bucket.
func bucketed(values func(any) []string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		vs := values(obj)
		out := make([]string, 0, len(vs))
		for _, v := range vs {
			out = append(out, bucket(v))
		}
		return out, nil
	}
}

// inBucket lists the objects of index whose values (by values) include
// value.
func inBucket(indexer cache.Indexer, index, value string, values func(any) []string) []any {
	objs, err := indexer.ByIndex(index, bucket(value))
	if err != nil {
		return nil
	}
	out := objs[:0:0]
	for _, obj := range objs {
		for _, v := range values(obj) {
			if v == value {
				out = append(out, obj)
				break
			}
		}
	}
	return out
}
