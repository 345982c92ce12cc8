// Package build turns a Snapshot into the typed Model and its Problems:
// the pure stage between the front-ends, which translate each kind of
// object (frontend/ingress, frontend/nic, frontend/configmap), and
// render. It is deterministic: the same snapshot and Options always give
// the same Model and Problems.
//
// Build reads the controller's ConfigMap first (every kind's defaults),
// then runs one processor per kind from one ordered list
// (newProcessors, processor.go):
//
//   - ingressProcessor: Ingresses (paths, canaries, mergeable masters and
//     minions, ssl-passthrough hosts, server annotations);
//   - virtualServerProcessor: VirtualServers with the
//     VirtualServerRoutes and Policies they use;
//   - transportServerProcessor: TransportServers, on the tls-passthrough
//     listener (hosts) or on the GlobalConfiguration's TCP and UDP
//     listeners (stream servers);
//   - servicesConfigMapProcessor: the tcp-services and udp-services
//     ConfigMaps.
//
// A processor keeps the state only its kind needs. Each of its objects
// passes one intake (intake.go: exclusion, translation, Problems,
// creation time) and claims hosts, paths and listeners through one set
// of claims (claims.go): the oldest object wins whatever its kind, the
// greater namespace/name and then the UID break ties, and every loser
// gets a Collision Problem saying who won and why. The objects of every
// processor that claim hosts are added together, oldest first; then each
// processor's after round runs in the list's order. What the kinds share
// stays on the builder with its methods: servers, claims and host owners,
// backends and their settings, secrets, Problems, creation times.
//
// finish then makes the servers final: a server a processor owns whole
// (a serverOwner, as a VirtualServer owns its host) keeps its locations
// as added; the others are made as Ingress rules make them (host-less
// paths, regex mode, defaultBackend, server annotations). It keeps only
// the backends and secrets some server uses, and sorts everything.
//
// A new kind of object is a new processor: its state, objects (through
// intake and the claims) and after, and one entry in newProcessors.
package build
