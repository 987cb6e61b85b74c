// Package rest serves DistillService over HTTP/JSON: its calls as REST at
// the paths of the google.api.http annotations in proto/distill/v1 (the
// streaming ones as newline-delimited JSON), every call over the Connect
// protocol, and the OpenAPI document buf generates from the annotations
// at /openapi.json. A maintained transcoder (connectrpc.com/vanguard)
// turns each request into a gRPC call on the server that already serves
// the API, so the tokens, the network policy and the operator's rules are
// the gRPC API's own, unchanged.
package rest

import (
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/proto/openapi"
)

// MaxBodyBytes bounds a request body, as the Firecrawl API's are bounded.
const MaxBodyBytes = 10 << 20

// Paths returns the prefixes the REST face answers under, in a fresh slice:
// the annotations' /api/, the Connect protocol's service path and the
// OpenAPI document.
func Paths() []string {
	return []string{"/api/", "/" + distillv1.DistillService_ServiceDesc.ServiceName + "/", "/openapi.json"}
}

// Handler serves DistillService, as registered on server, over HTTP/JSON.
// version goes into the OpenAPI document.
func Handler(server *grpc.Server, version string) (http.Handler, error) {
	doc, err := openapi.Document(version)
	if err != nil {
		return nil, err
	}
	svc := vanguard.NewService(distillv1.DistillService_ServiceDesc.ServiceName, server,
		vanguard.WithTargetProtocols(vanguard.ProtocolGRPC), vanguard.WithTargetCodecs(vanguard.CodecProto))
	// distill's JSON spells fields as the proto does (final_url) and
	// leaves out what was not asked for; an unknown field is refused.
	transcoder, err := vanguard.NewTranscoder([]*vanguard.Service{svc}, vanguard.WithCodec(func(r vanguard.TypeResolver) vanguard.Codec {
		return strictJSON{&vanguard.JSONCodec{
			MarshalOptions:   protojson.MarshalOptions{Resolver: r, UseProtoNames: true},
			UnmarshalOptions: protojson.UnmarshalOptions{Resolver: r},
		}}
	}))
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	for pattern, method := range streams {
		mux.Handle(pattern, streamREST(transcoder, method))
	}
	mux.Handle("/", transcoder)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			// Refused before it is read, as the caller's mistake; a body
			// of unknown length is cut at the limit below instead.
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = fmt.Fprintf(w, `{"code":%d,"message":"request body of %d bytes, over the limit of %d"}`, connect.CodeInvalidArgument, r.ContentLength, int64(MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		mux.ServeHTTP(w, r)
	}), nil
}

// strictJSON refuses a body it cannot read (an unknown field, a wrong
// type) as the caller's mistake, 400, where the transcoder would take any
// codec error for its own, 500.
type strictJSON struct {
	*vanguard.JSONCodec
}

func (c strictJSON) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}

func (c strictJSON) UnmarshalField(data []byte, msg proto.Message, field protoreflect.FieldDescriptor) error {
	if err := c.JSONCodec.UnmarshalField(data, msg, field); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}
