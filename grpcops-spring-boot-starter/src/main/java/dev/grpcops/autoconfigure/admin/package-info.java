/** Admin authorization for the methods of every {@code AdminMethods} bean ({@code grpcops.admin.*}). */
package dev.grpcops.autoconfigure.admin;
