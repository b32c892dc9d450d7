/** Fair admission: its properties ({@code grpcops.admission.*}), metrics and beans, for either starter. */
package dev.grpcops.spring.admission;
