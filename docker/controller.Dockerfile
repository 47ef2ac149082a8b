# The tau-core controller image the tau-core-controller chart deploys.
#   docker build -f docker/controller.Dockerfile -t tau-core-controller:dev .
# The container runs as a non-root user with a read-only root filesystem (see the chart).

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY tau ./tau
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[controller]"

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1
COPY --from=build /wheels /wheels
RUN pip install --no-index --find-links /wheels "taugrid[controller]" \
    && rm -rf /wheels \
    && useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin tau
USER 65532:65532
# 8080: /metrics, 8081: /healthz and /readyz
EXPOSE 8080 8081
ENTRYPOINT ["python", "-m", "tau.controller"]
CMD ["--system-namespace=tau-system"]
