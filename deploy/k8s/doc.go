// Package k8s holds the tests of distill's Kubernetes manifests: they render
// every kustomization here, decode each object strictly into the Kubernetes
// API types, and check that the pieces fit together and keep the security
// model the README describes.
//
// It is a module of its own, outside go.work, so that the services never
// depend on kustomize or the Kubernetes API; run it with GOWORK=off.
package k8s
