# Burnrate as a container: one static binary. docker-compose.yml runs it
# next to Postgres and a mail catcher.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /burnrate ./cmd/burnrate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /burnrate /burnrate
EXPOSE 8080
ENTRYPOINT ["/burnrate"]
CMD ["serve"]
