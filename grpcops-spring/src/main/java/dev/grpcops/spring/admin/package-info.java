/** Admin authorization: its properties ({@code grpcops.admin.*}), metrics and beans, for either starter. */
package dev.grpcops.spring.admin;
