import { flag, httpUrl, milliseconds, oneOf, text, whole } from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const BOTH = ["app", "cli"] as const;

/** Where DevBoxes run and how long their leases and heartbeats last. */
export const devboxes = {
  title: "DevBoxes",
  about:
    "DevBoxes are local processes under bubblewrap by default, local containers with `CLUSTERCODE_EXECUTOR=container`, ECS tasks with `CLUSTERCODE_EXECUTOR=ecs` (see ECS below). The timings are passed on to each DevBox's agent, so that both sides agree.",
  settings: {
    executor: withDefault("CLUSTERCODE_EXECUTOR", oneOf(["local", "ecs", "container"]), "local", {
      description:
        "`local`: DevBoxes are local processes under bubblewrap; `container`: local containers of the DevBox image in Docker or Podman (hosts without bubblewrap, such as macOS); `ecs` (the app only): ECS tasks.",
      readers: BOTH,
    }),
    containerEngine: optional("CLUSTERCODE_CONTAINER_ENGINE", oneOf(["docker", "podman"]), {
      description:
        "With `CLUSTERCODE_EXECUTOR=container`: the engine that runs DevBoxes. Unset: the first of `docker` and `podman` on `PATH` that answers.",
      readers: BOTH,
      default: "the first of `docker`, `podman` that answers",
    }),
    containerImage: withDefault("CLUSTERCODE_CONTAINER_IMAGE", text(), "clustercode-devbox", {
      description:
        "With `CLUSTERCODE_EXECUTOR=container`: the DevBox image (built from `images/devbox/Dockerfile`) when a workflow's `devbox.image` names none.",
      readers: BOTH,
    }),
    unsafeLocalDevBox: optional("CLUSTERCODE_UNSAFE_LOCAL_DEVBOX", flag(), {
      description:
        "`1`: run local DevBoxes without the bubblewrap sandbox (recorded in every run's evidence).",
      readers: BOTH,
    }),
    bwrap: optional("CLUSTERCODE_BWRAP", text(), {
      description: "The bubblewrap binary local DevBoxes run under.",
      readers: BOTH,
      default: "`bwrap` on `PATH`",
    }),
    path: optional("PATH", text(), {
      description: "Where `bwrap` is looked for, and the search path local DevBoxes are given.",
      readers: BOTH,
    }),
    setupCacheMaxMb: withDefault("CLUSTERCODE_SETUP_CACHE_MAX_MB", whole(0, 10_000_000), 5120, {
      description:
        "The most the setup cache on this host (`devbox.cache`, under `<state>/cache/`: local DevBoxes', and ECS DevBoxes' without a bucket) may hold, in MiB; the least recently used entries go first. `0` keeps nothing.",
      readers: BOTH,
    }),
    setupCacheEntryMaxMb: withDefault(
      "CLUSTERCODE_SETUP_CACHE_ENTRY_MAX_MB",
      whole(1, 1_000_000),
      2048,
      {
        description:
          "ECS DevBoxes: the largest setup cache entry the hub takes, in MiB; a larger one is refused before a byte of it is stored (on the host it is also at most `CLUSTERCODE_SETUP_CACHE_MAX_MB`).",
        readers: BOTH,
      },
    ),
    setupCacheBucket: optional("CLUSTERCODE_SETUP_CACHE_BUCKET", text(), {
      description:
        "ECS DevBoxes: the S3 bucket the hub keeps their setup cache in (the CDK stack sets it). Unset: a directory of the app's host, `<state>/cache/`, as for local DevBoxes.",
      readers: ["app"],
    }),
    setupCacheS3Endpoint: optional("CLUSTERCODE_SETUP_CACHE_S3_ENDPOINT", httpUrl(), {
      description:
        "An S3 endpoint for the setup cache bucket (tests, emulators); objects are then addressed by path.",
      readers: ["app"],
    }),
    leaseMs: withDefault("CLUSTERCODE_DEVBOX_LEASE_MS", milliseconds(), 15_000, {
      description:
        "How long a replica's lease on a DevBox it runs lasts unless renewed (renewed every third); another replica declares the DevBox lost only once it lapsed.",
      readers: ["app"],
    }),
    heartbeatMs: withDefault("CLUSTERCODE_DEVBOX_HEARTBEAT_MS", milliseconds(), 3000, {
      description:
        "How often a DevBox's agent reports to the hub; must be shorter than `CLUSTERCODE_DEVBOX_LAPSE_MS`.",
      readers: ["app", "cli", "agent"],
    }),
    lapseMs: withDefault("CLUSTERCODE_DEVBOX_LAPSE_MS", milliseconds(), 15_000, {
      description:
        "How long the hub waits without hearing from a DevBox before it is lost, and the agent without reaching the hub before it gives up.",
      readers: ["app", "cli", "agent"],
    }),
    internalHost: optional("CLUSTERCODE_INTERNAL_HOST", text(), {
      description: "With `ecs`: the address ECS DevBoxes reach this replica's hub on.",
      readers: ["app"],
      default: "the task's private IPv4, from the ECS metadata endpoint",
    }),
    internalPort: withDefault("CLUSTERCODE_INTERNAL_PORT", whole(1, 65535), 8080, {
      description: "With `ecs`: the port of this replica's hub.",
      readers: ["app"],
    }),
    warmMax: withDefault("CLUSTERCODE_WARM_MAX", whole(0, 64), 2, {
      description:
        "How many warm DevBoxes (`devbox.warm`) this host keeps at most, over every repository (with `ecs`: warm tasks per app replica): each is capacity paid for while it waits. `0` turns warm DevBoxes off.",
      readers: ["app", "cli"],
    }),
    ecsMetadataUri: optional("ECS_CONTAINER_METADATA_URI_V4", text(), {
      description: "Set by ECS: where the app finds its task's private address.",
      readers: ["app"],
    }),
  },
} satisfies SettingGroup;
