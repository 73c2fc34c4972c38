# Switchyard in a container: docker build -t switchyard . && docker run -d -p 8000:8000 \
#   -v switchyard-data:/data -e SWITCHYARD_ADMIN_TOKEN=... --stop-timeout 30 switchyard
# The official Deno image, run as its non-root user "deno"; the KV file lives in the /data volume.
FROM denoland/deno:2.9.6

WORKDIR /app
COPY deno.json switchyard.json main.ts ./
COPY src ./src
RUN mkdir -p /data && chown deno:deno /data \
  && deno cache main.ts src/cli/keys.ts src/cli/catalogue.ts src/cli/backup.ts

USER deno
ENV SWITCHYARD_KV=/data/switchyard.kv NO_COLOR=1
VOLUME ["/data"]
EXPOSE 8000

# 200 while KV answers reads and writes (see /healthz in the README).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch('http://127.0.0.1:8000/healthz'); Deno.exit(r.ok ? 0 : 1)"]

# SIGTERM (docker stop) drains open streams for server.shutdown_grace_seconds; give docker stop
# a longer --stop-timeout than that. The flags are deno task start's (the V8 flag: see the
# README's Deploying section), with the /data volume for data/: it reads its config, the volume
# and the image worker's modules (relative to /app), and writes the volume only (README,
# Security: Permissions).
CMD ["run", "--v8-flags=--max-semi-space-size=16,--heap-growing-percent=100", "--allow-net", "--allow-env", \
  "--allow-read=switchyard.json,/data,/var/run/secrets/eks.amazonaws.com/serviceaccount/token,/var/run/secrets/pods.eks.amazonaws.com/serviceaccount/eks-pod-identity-token,/var/run/secrets/azure/tokens/azure-identity-token,src/images/worker.ts,src/images/work.ts,src/images/transcode.ts,src/images/jpeg.ts,src/images/png.ts,src/http/bytes.ts,src/providers/simulator/painter.ts,src/providers/simulator/scene.ts", \
  "--allow-write=/data", "main.ts"]
