/** Fair admission in front of every served call, on by default ({@code grpcops.admission.*}). */
package dev.grpcops.autoconfigure.admission;
