#!/usr/bin/env bash
# Records the core's API as the baseline the build's japicmp check holds it to
# (grpcops-core/api/grpcops-core-api-baseline.jar): run it when a release is made, or when an
# incompatible change to the stable API is meant, and commit the jar with a message that says why.
#
#   scripts/api-baseline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl grpcops-core -am package -DskipTests -Djapicmp.skip=true
jar=$(ls grpcops-core/target/grpcops-core-*.jar | grep -v -- '-sources\|-tests\|-javadoc' | head -1)
mkdir -p grpcops-core/api
cp "$jar" grpcops-core/api/grpcops-core-api-baseline.jar
echo "api-baseline: recorded $jar as grpcops-core/api/grpcops-core-api-baseline.jar"
