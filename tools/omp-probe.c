#include <omp.h>
int main(void)
{
  int n = 0;
#pragma omp parallel num_threads(2) reduction(+:n)
  n += omp_get_thread_num() >= 0;
  return n == 2 ? 0 : 1;
}
