// The base images the host matrix boots: each a Debian release built from Debian's own packages
// (mmdebstrap), since this machine reaches no image registry. An image's tag holds a hash of its
// recipe, so a changed recipe builds a new image and an unchanged one is reused.
// MATRIX_IMAGES=registry starts each base that has one from `debian:<suite>` instead (a CI runner
// with Docker Hub); a base with no registry image (split /usr) is built from packages either way.
import { createHash } from "node:crypto";

export type BaseId = "deb11" | "deb12" | "deb12-split" | "deb13";

export interface BaseRecipe {
  id: BaseId;
  suite: "bullseye" | "bookworm" | "trixie";
  /** /bin, /lib, /sbin as links into /usr, or real directories. */
  usr: "merged" | "split";
  /** On top of minbase: what the project's checks run (bwrap, the attack world's git). */
  packages: readonly string[];
  /** The registry image with the same release, or null where none has this layout. */
  registry: string | null;
  why: string;
}

const PACKAGES = ["bubblewrap", "git", "util-linux", "procps"] as const;

export const BASES: readonly BaseRecipe[] = [
  {
    id: "deb12",
    suite: "bookworm",
    usr: "merged",
    packages: PACKAGES,
    registry: "debian:bookworm",
    why: "the host every other tier runs on: bwrap 0.8.0, merged /usr",
  },
  {
    id: "deb12-split",
    suite: "bookworm",
    usr: "split",
    packages: PACKAGES,
    registry: null,
    why: "/bin, /lib and /sbin are real directories, so the bind table binds them instead of making links",
  },
  {
    id: "deb13",
    suite: "trixie",
    usr: "merged",
    packages: PACKAGES,
    registry: "debian:trixie",
    why: "the next release: a newer bwrap, kernel interfaces and glibc than the one the tiers run on",
  },
  {
    id: "deb11",
    suite: "bullseye",
    usr: "split",
    packages: PACKAGES,
    registry: "debian:bullseye",
    why: "bwrap 0.4.1, older than every session's --disable-userns: the probe must refuse and name the version",
  },
];

export type ImageSource = "packages" | "registry";

/** Where this run's bases come from: MATRIX_IMAGES=registry, else Debian's packages. */
export function imageSourceOf(env: NodeJS.ProcessEnv = process.env): ImageSource {
  const v = env.MATRIX_IMAGES ?? "packages";
  if (v !== "packages" && v !== "registry")
    throw new Error(`MATRIX_IMAGES must be "packages" or "registry", got ${JSON.stringify(v)}`);
  return v;
}

/** How a base is built from a source: a registry base with none of its own falls back to packages. */
export function buildOf(b: BaseRecipe, source: ImageSource): ImageSource {
  return source === "registry" && b.registry !== null ? "registry" : "packages";
}

/** The mmdebstrap command line that builds a base into a tarball. */
export function mmdebstrapArgs(b: BaseRecipe, tarball: string): string[] {
  return [
    "--variant=minbase",
    `--include=${b.packages.join(",")}`,
    // Merged /usr is each suite's own default from bookworm on, and mmdebstrap's for bullseye is split.
    ...(b.usr === "split" && b.suite !== "bullseye" ? ["--hook-dir=/usr/share/mmdebstrap/hooks/no-merged-usr"] : []),
    b.suite,
    tarball,
  ];
}

/** The Dockerfile that builds a base from its registry image. */
export function registryDockerfile(b: BaseRecipe): string {
  if (b.registry === null) throw new Error(`${b.id} has no registry image`);
  return [
    `FROM ${b.registry}`,
    `RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${b.packages.join(" ")} && rm -rf /var/lib/apt/lists/*`,
    "",
  ].join("\n");
}

/** The image's tag: its id and the first 12 hex of the hash of everything that builds it. */
export function imageTag(b: BaseRecipe, source: ImageSource): string {
  const how = buildOf(b, source);
  const recipe = how === "registry" ? registryDockerfile(b) : mmdebstrapArgs(b, "-").join(" ");
  const hash = createHash("sha256").update(`${how}\n${recipe}`).digest("hex").slice(0, 12);
  return `localhost/mosaic-host:${b.id}-${hash}`;
}

export function baseOf(id: BaseId): BaseRecipe {
  const b = BASES.find((x) => x.id === id);
  if (b === undefined) throw new Error(`no base image ${id}`);
  return b;
}
